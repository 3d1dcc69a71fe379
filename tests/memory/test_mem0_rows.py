"""Mem0's side of the contract: rows written as Mem0 writes them but under replay-stable ids,
no history database, and deleted text gone from the embedded store's files. Where we rely
on Mem0 or qdrant-client internals, a test here fails loudly when an upgrade moves them."""

import inspect
import uuid
from pathlib import Path

import pytest

from flink_agents_ltm.api.memory import LongTermMemoryError
from flink_agents_ltm.integrations.mem0.history import MEM0_HISTORY_METHODS, NoHistory
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.row_writes import write_rows
from flink_agents_ltm.integrations.mem0.scope import mem0_id
from tests.memory.conftest import rows_of, unwrapped


def test_our_rows_carry_exactly_the_fields_mem0s_own_add_writes(ltm, mem0_memory):
    ltm.switch_context("k1", "obs-1", False)
    [ours] = ltm.get_memory_set("notes").add("green tea", {"kind": "tea"})
    theirs = mem0_memory.add([{"role": "user", "content": "black tea"}], user_id="test-job",
                             agent_id="k1", run_id="notes", metadata={"kind": "tea"},
                             infer=False)["results"][0]["id"]
    store = mem0_memory.vector_store
    ours_row, theirs_row = store.get(vector_id=ours).payload, store.get(vector_id=theirs).payload
    assert set(ours_row) == set(theirs_row)
    assert {k: ours_row[k] for k in ("user_id", "agent_id", "run_id", "role", "kind")} == {
        k: theirs_row[k] for k in ("user_id", "agent_id", "run_id", "role", "kind")}


def test_no_history_stands_in_for_every_method_mem0_calls_on_its_history_database():
    from mem0.memory.storage import SQLiteManager

    public = {name for name, _ in inspect.getmembers(SQLiteManager, inspect.isfunction)
              if not name.startswith("_")}
    assert public == MEM0_HISTORY_METHODS
    assert {n for n in dir(NoHistory) if not n.startswith("_")} >= MEM0_HISTORY_METHODS


def test_mem0_keeps_no_history_of_an_item_even_through_its_own_delete(ltm, mem0_memory):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    [item] = notes.add("the customer's passport number is X123")
    mem0_memory.delete(item)  # Mem0's own delete (as infer=True updates use) writes history
    assert mem0_memory.history(item) == []


def test_the_wildcard_key_reaches_mem0_escaped_so_no_store_reads_it_as_any_value(
        ltm, mem0_memory):
    ltm.switch_context("*", "obs-1", False)
    ltm.get_memory_set("*").add("starry")
    [row] = mem0_memory.get_all(filters={"user_id": "test-job", "agent_id": "%2A"})["results"]
    assert (row["agent_id"], row["run_id"]) == ("%2A", "%2A")
    assert mem0_id("*") != "*" and mem0_id("%2A") != mem0_id("*")


class _UpsertlessStore:
    """A real Qdrant store behind a class no write strategy knows (so the generic
    insert-or-update path runs), whose ``insert`` fails on its ``fail_on``-th call."""

    upserts_on_insert = False

    def __init__(self, inner, fail_on):
        self._inner, self._fail_on, self._inserts = inner, fail_on, 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def insert(self, vectors, payloads, ids):
        self._inserts += 1
        if self._inserts == self._fail_on:
            raise ConnectionError("store went away")
        self._inner.insert(vectors=vectors, payloads=payloads, ids=ids)


def test_a_store_without_upsert_gets_updates_for_known_ids_and_loses_a_failed_batch(
        mem0_memory):
    store = _UpsertlessStore(unwrapped(mem0_memory), fail_on=3)
    vector = [0.1] * 384
    ids = [str(uuid.uuid4()) for _ in range(3)]
    payload = {"user_id": "j", "agent_id": "k", "run_id": "r", "data": "v1"}
    write_rows(store, ids[:1], [[vector]], [payload])
    write_rows(store, ids[:1], [[vector]], [{**payload, "data": "v2"}])  # known id: updated
    assert store.get(vector_id=ids[0]).payload["data"] == "v2"
    with pytest.raises(RuntimeError, match="store went away") as failed:
        write_rows(store, ids, [[vector] * 3], [payload] * 3)
    assert failed.value.removed == 1  # ids[1] was inserted, then removed again
    assert [store.get(vector_id=i) is not None for i in ids] == [True, False, False]


def test_a_failing_store_write_says_nothing_of_the_batch_is_stored(ltm, mem0_memory,
                                                                   monkeypatch):
    def failing(*args, **kwargs):
        raise ConnectionError("password=hunter2 rejected")

    monkeypatch.setattr(unwrapped(mem0_memory), "insert", failing)
    ltm.switch_context("k1", "obs-1", False)
    with pytest.raises(LongTermMemoryError) as error:
        ltm.get_memory_set("notes").add(["a", "b"])
    assert "none of its 2 items is stored" in str(error.value)
    assert "hunter2" not in str(error.value)
    assert rows_of(mem0_memory, "k1") == []


@pytest.fixture
def on_disk(tmp_path):
    """The embedded default on disk (hashing embedder to stay fast)."""
    spec = StoreSpec(job_id="erasure", embedder="hashing", base_dir=tmp_path)
    memory, release = acquire_memory(spec)
    ltm = Mem0LongTermMemory("erasure", memory)
    yield ltm, tmp_path
    release()


def files_mentioning(folder: Path, marker: str) -> list[str]:
    needle = marker.encode()
    return [str(path) for path in folder.rglob("*")
            if path.is_file() and needle in path.read_bytes()]


@pytest.mark.parametrize("erase", [
    lambda ltm, notes, ids: notes.delete(ids),
    lambda ltm, notes, ids: notes.delete(),
    lambda ltm, notes, ids: ltm.delete_memory_set("notes"),
    lambda ltm, notes, ids: ltm.erase_key("customer-7"),
], ids=["delete by id", "delete all", "delete_memory_set", "erase_key"])
def test_erased_text_leaves_no_trace_in_any_file_of_the_embedded_store(on_disk, erase):
    ltm, folder = on_disk
    marker = f"passport-{uuid.uuid4().hex}"
    ltm.switch_context("customer-7", "obs", False)
    notes = ltm.get_memory_set("notes")
    ids = notes.add([f"{marker} number one", f"{marker} number two"])
    ltm.switch_context("customer-8", "obs", False)
    ltm.get_memory_set("notes").add("someone else's note")
    assert files_mentioning(folder, marker)  # the check can see the text while it is stored

    ltm.switch_context("customer-7", "obs", False)
    erase(ltm, notes, ids)
    assert files_mentioning(folder, marker) == []
    assert files_mentioning(folder, "someone else's note")


@pytest.mark.parametrize("store", ["embedded", "qdrant"])
def test_deleted_text_is_overwritten_even_where_sqlite_keeps_deleted_bytes_by_default(
        tmp_path, monkeypatch, store):
    """Debian builds SQLite with SECURE_DELETE on; others (macOS, many distributions) do
    not. Simulate such a build under both embedded stores (SQLite files) and erase."""
    import sqlite3

    from qdrant_client.local import persistence

    real_connect = sqlite3.connect

    def connect_keeping_deleted_bytes(*args, **kwargs):
        connection = real_connect(*args, **kwargs)
        connection.execute("PRAGMA secure_delete = OFF")
        return connection

    monkeypatch.setattr(persistence.sqlite3, "connect", connect_keeping_deleted_bytes)
    vector_store = None if store == "embedded" else {"provider": "qdrant", "config": {
        "collection_name": "erasure", "path": str(tmp_path / "qdrant"), "on_disk": True}}
    memory, release = acquire_memory(StoreSpec(job_id="erasure", embedder="hashing",
                                               base_dir=tmp_path, vector_store=vector_store))
    try:
        ltm = Mem0LongTermMemory("erasure", memory)
        ltm.switch_context("customer-7", "obs", False)
        marker = f"passport-{uuid.uuid4().hex}"
        ltm.get_memory_set("notes").add([f"{marker} one", "a note that stays"])
        assert files_mentioning(tmp_path, marker)
        ltm.get_memory_set("notes").delete(
            [i.id for i in ltm.get_memory_set("notes").get() if marker in i.value])
        assert files_mentioning(tmp_path, marker) == []
    finally:
        release()
