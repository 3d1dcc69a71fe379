"""Erasure on the embedded store while another connection reads it: a reader's snapshot from
before a delete keeps the deleted rows readable, so their bytes must stay until it ends. A
delete waits for it (at most ``erasure_wait_ms``), then its text is in no file of the store:
not the SQLite file, not its ``-wal``, not its ``-shm``. Past that bound the text leaves
the log at the store's first call after the reader ended, whichever call that is."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.providers.embedded.file import in_unallocated_space
from flink_agents_ltm.integrations.mem0.providers.embedded.store import EmbeddedVectorStore

DIMS = 384  # a real row's size: a whole 64 kB page holds ~40 of them


def files_mentioning(folder: Path, marker: str) -> list[str]:
    needle = marker.encode()
    return sorted(p.name for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def rows_in(path: Path) -> int:
    with sqlite3.connect(path) as probe:
        return probe.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


@contextmanager
def reader_holding_a_snapshot(path: Path, marker: str, until: Callable[[], bool] | None
                              ) -> Iterator[threading.Event]:
    """Another thread's own connection reads every row (the marker among them) and keeps
    that read transaction open until ``until()`` holds (watched from a third connection),
    or, with ``until=None``, until the event it yields is set. Ended on leaving, always."""
    release = threading.Event()
    reading = threading.Event()
    seen: list[str] = []
    ended = threading.Event()

    def read() -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("BEGIN")
            seen.extend(row[0] for row in conn.execute("SELECT payload FROM vectors"))
            reading.set()
            give_up = time.monotonic() + 60  # never hang the session
            while not release.is_set() and time.monotonic() < give_up:
                if until is not None and until():
                    break
                release.wait(0.01)
            conn.execute("COMMIT")
        finally:
            conn.close()
            ended.set()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        assert reading.wait(30)
        assert any(marker in payload for payload in seen)  # the snapshot holds the text
        yield release
    finally:
        release.set()
        thread.join(30)
    assert ended.is_set()


@pytest.fixture
def on_disk(tmp_path):
    memory, release = acquire_memory(StoreSpec("erasure", embedder="hashing",
                                               base_dir=tmp_path))
    try:
        yield Mem0LongTermMemory("erasure", memory), tmp_path
    finally:
        release()


@pytest.mark.parametrize("erase", [
    lambda ltm, notes, ids: notes.delete(ids),
    lambda ltm, notes, ids: notes.delete(),
    lambda ltm, notes, ids: ltm.erase_key("customer-7"),
], ids=["delete by id", "delete of the set", "erase_key"])
def test_a_delete_while_another_connection_reads_returns_with_the_text_in_no_file(
        on_disk, erase):
    ltm, folder = on_disk
    marker = f"passport-{uuid.uuid4().hex}"
    ltm.switch_context("customer-7", "obs", False)
    notes = ltm.get_memory_set("notes")
    ids = notes.add([f"{marker} number one", f"{marker} number two", "a third note"])
    ltm.switch_context("customer-8", "obs", False)
    ltm.get_memory_set("notes").add("someone else's note")
    ltm.switch_context("customer-7", "obs", False)
    [path] = folder.rglob("*.sqlite3")
    assert files_mentioning(folder, marker)
    before = rows_in(path)

    # The reader ends once it sees the delete committed, while the delete still runs.
    with reader_holding_a_snapshot(path, marker, until=lambda: rows_in(path) < before):
        erase(ltm, notes, ids)
        assert files_mentioning(folder, marker) == []

    assert files_mentioning(folder, "someone else's note")


def test_deleted_rows_that_free_whole_pages_leave_no_bytes_in_the_free_pages(tmp_path):
    path = tmp_path / "v.sqlite3"
    store = EmbeddedVectorStore(str(path), DIMS)
    try:
        marker = f"passport-{uuid.uuid4().hex}"
        vectors = np.random.default_rng(7).random((200, DIMS)).tolist()
        ids = [f"id-{n}" for n in range(200)]
        store.insert(vectors, [{"data": f"{marker} {n}", "user_id": "u"} for n in range(200)],
                     ids)
        store.insert([vectors[0]], [{"data": "stays", "user_id": "v"}], ["stays"])
        store._erase_from_log(store._connection())  # the rows now lie in the file's pages
        assert files_mentioning(tmp_path, marker) == [path.name]

        with reader_holding_a_snapshot(path, marker, until=lambda: rows_in(path) == 1):
            store.delete_many(ids)

        free_pages = store._connection().execute("PRAGMA freelist_count").fetchone()[0]
        assert free_pages > 0  # the deleted rows' pages are free pages of the file now
        assert files_mentioning(tmp_path, marker) == []
        assert store.get("stays") is not None
    finally:
        store.close()


def test_a_row_whose_copy_a_page_rebuild_left_in_unused_space_leaves_no_copy_when_deleted(
        tmp_path):
    """SQLite rebuilds pages when deletes rebalance the b-tree, and a rebuilt page keeps the
    bytes of rows it moved away in its unused space (``secure_delete`` zeroes deleted rows
    and free pages only). Deleting 160 rows of 480 leaves a copy of row 450 so."""
    path = tmp_path / "v.sqlite3"
    store = EmbeddedVectorStore(str(path), DIMS)
    try:
        marker = uuid.uuid4().hex  # the rows' size decides where the copy lands
        vectors = np.random.default_rng(1).random((480, DIMS)).tolist()
        ids = [f"id-{n}" for n in range(480)]
        store.insert(vectors, [{"data": f"{marker}-{n}-end", "user_id": "u",
                                "agent_id": f"k{n % 4}"} for n in range(480)], ids)
        for first in range(0, 160, 40):
            store.delete_many(ids[first:first + 40])
        copied = f"{marker}-450-end".encode()
        assert in_unallocated_space(path, [copied]) == [True]  # the case exists

        store.delete("id-450")

        assert files_mentioning(tmp_path, f"{marker}-450-end") == []
        assert store.get("id-451").payload["data"] == f"{marker}-451-end"
    finally:
        store.close()


def test_past_the_wait_the_text_leaves_the_log_at_the_first_call_after_the_reader_ends(
        tmp_path, caplog):
    """The stated bound: a reader holding its snapshot longer than ``erasure_wait_ms``
    keeps the text in the ``-wal`` (it may still read it) and the delete says so; the
    first call of the store after the reader ended, a read here, removes it."""
    path = tmp_path / "v.sqlite3"
    store = EmbeddedVectorStore(str(path), 4, erasure_wait_ms=50)
    try:
        marker = f"passport-{uuid.uuid4().hex}"
        store.insert([[1, 0, 0, 0], [0, 1, 0, 0]],
                     [{"data": marker, "user_id": "u"}, {"data": "stays", "user_id": "u"}],
                     ["gone", "stays"])
        with caplog.at_level(logging.WARNING), \
                reader_holding_a_snapshot(path, marker, until=None) as release:
            store.delete("gone")
            assert files_mentioning(tmp_path, marker) == [f"{path.name}-wal"]
            release.set()
        assert "items ['gone']" in caplog.text
        assert "held a snapshot from before the delete" in caplog.text
        assert marker not in caplog.text

        assert store.get("stays") is not None
        assert files_mentioning(tmp_path, marker) == []
    finally:
        store.close()


def test_close_truncates_the_log_a_reader_kept_after_a_delete(tmp_path):
    path = tmp_path / "v.sqlite3"
    store = EmbeddedVectorStore(str(path), 4, erasure_wait_ms=0)
    marker = f"passport-{uuid.uuid4().hex}"
    try:
        store.insert([[1, 0, 0, 0]], [{"data": marker, "user_id": "u"}], ["gone"])
        with reader_holding_a_snapshot(path, marker, until=None) as release:
            store.delete("gone")
            assert files_mentioning(tmp_path, marker)
            release.set()
    finally:
        store.close()
    assert files_mentioning(tmp_path, marker) == []


def test_an_update_leaves_the_old_text_in_no_file(tmp_path):
    path = tmp_path / "v.sqlite3"
    store = EmbeddedVectorStore(str(path), 4)
    try:
        marker = f"passport-{uuid.uuid4().hex}"
        store.insert([[1, 0, 0, 0]], [{"data": marker, "user_id": "u"}], ["row"])
        store.update("row", payload={"data": "new text", "user_id": "u"})
        assert files_mentioning(tmp_path, marker) == []
        store.insert([[1, 0, 0, 0]], [{"data": marker, "user_id": "u"}], ["row"])
        store.insert([[0, 1, 0, 0]], [{"data": "replaced", "user_id": "u"}], ["row"])
        assert files_mentioning(tmp_path, marker) == []
        assert store.get("row").payload["data"] == "replaced"
    finally:
        store.close()


def test_a_negative_erasure_wait_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="erasure_wait_ms must be 0 or more, got -1"):
        EmbeddedVectorStore(str(tmp_path / "v.sqlite3"), 4, erasure_wait_ms=-1)
