"""Erasure on the embedded store with many threads deleting at once while others read: when
each delete returns, its text is in no file of the store (``.sqlite3``, ``-wal``, ``-shm``),
read byte for byte by the deleting thread right then, or the delete logged an error naming
the item. Two threads checkpointing at once used to let one of them return early: SQLite
refuses a second checkpoint at once (busy), and that delete returned with its text still in
the ``-wal`` while the other thread's checkpoint was still copying it."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from flink_agents_ltm.integrations.mem0.providers.embedded import store as embedded_store
from flink_agents_ltm.integrations.mem0.providers.embedded.store import EmbeddedVectorStore

DIMS = 16
DELETERS = 8
ROWS_PER_DELETER = 30


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def errors():
    handler = _Errors()
    embedded_store.log.addHandler(handler)
    try:
        yield handler.messages
    finally:
        embedded_store.log.removeHandler(handler)


def files_holding(path: Path, needle: bytes) -> list[str]:
    found = []
    for suffix in ("", "-wal", "-shm"):
        try:
            if needle in Path(f"{path}{suffix}").read_bytes():
                found.append(f"{path.name}{suffix}")
        except FileNotFoundError:
            pass
    return found


def run(store: EmbeddedVectorStore, path: Path, snapshot_s: float) -> dict[str, list[str]]:
    """DELETERS threads delete their rows one at a time while two threads search and get
    and a third connection holds a read snapshot for ``snapshot_s`` once the deletes run;
    the files still holding each deleted text, read as each delete returns."""
    marker = f"passport-{uuid.uuid4().hex}"
    vectors = np.random.default_rng(7).random((DELETERS * ROWS_PER_DELETER, DIMS)).tolist()
    ids = [f"id-{n}" for n in range(len(vectors))]
    store.insert(vectors, [{"data": f"{marker}-{n}-end", "user_id": "u", "agent_id": f"k{n % 4}"}
                           for n in range(len(vectors))], ids)
    store.insert([vectors[0]], [{"data": "stays", "user_id": "v"}], ["stays"])
    left: dict[str, list[str]] = {}
    stop = threading.Event()
    started = threading.Barrier(DELETERS + 1)
    failures: list[BaseException] = []

    def delete(mine: list[int]) -> None:
        try:
            started.wait(30)
            for n in mine:
                store.delete(ids[n])
                left[ids[n]] = files_holding(path, f"{marker}-{n}-end".encode())
        except BaseException as error:  # noqa: BLE001 - reported by the test
            failures.append(error)

    def read(k: int) -> None:
        while not stop.is_set():
            store.search("q", vectors[k], top_k=5, filters={"user_id": "u", "agent_id": f"k{k}"})
            store.get(ids[k])

    def hold_a_snapshot() -> None:
        started.wait(30)
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("BEGIN")
            conn.execute("SELECT COUNT(*) FROM vectors").fetchone()
            time.sleep(snapshot_s)
            conn.execute("COMMIT")
        finally:
            conn.close()

    readers = [threading.Thread(target=read, args=(k,)) for k in range(2)]
    deleters = [threading.Thread(target=delete, args=(list(range(t, len(ids), DELETERS)),))
                for t in range(DELETERS)]
    holder = threading.Thread(target=hold_a_snapshot)
    for thread in (*readers, *deleters, holder):
        thread.start()
    for thread in (*deleters, holder):
        thread.join(120)
    stop.set()
    for thread in readers:
        thread.join(30)
    assert not failures, failures
    assert len(left) == len(ids)
    assert store.get("stays") is not None
    return left


def test_eight_threads_deleting_while_others_read_leave_no_deleted_text_in_any_file(
        tmp_path, errors):
    path = tmp_path / "v.sqlite3"
    # A wait far above the 0.5 s snapshot: on a machine loaded 8-fold a delete once waited
    # past 5 s for the checkpoints of the other seven threads and rightly gave up, naming
    # its item; a delete that returns early with its text on disk fails either way.
    store = EmbeddedVectorStore(str(path), DIMS, erasure_wait_ms=30_000)
    try:
        left = run(store, path, snapshot_s=0.5)
        assert {vector_id: files for vector_id, files in left.items() if files} == {}
        assert errors == []
    finally:
        store.close()


def test_a_snapshot_held_past_the_wait_makes_each_delete_it_blocked_name_its_item(
        tmp_path, errors):
    path = tmp_path / "v.sqlite3"
    store = EmbeddedVectorStore(str(path), DIMS, erasure_wait_ms=100)
    try:
        left = run(store, path, snapshot_s=1.5)
        kept = sorted(vector_id for vector_id, files in left.items() if files)
        assert kept  # the snapshot outlived the wait: some deletes could not purge
        unnamed = [vector_id for vector_id in kept
                   if not any(f"'{vector_id}'" in message for message in errors)]
        assert unnamed == []
        store.get("stays")  # the first call after the reader ended purges the log
        assert files_holding(path, b"passport-") == []
    finally:
        store.close()
