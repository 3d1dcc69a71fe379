"""Long-term memory on a real pgvector server: scoped per key like the embedded store,
shared by connections, and safe under many worker threads."""

import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg2
import pytest

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.serialized_store import SerializedVectorStore
from tests.memory.stress import stress
from tests.pgvector.test_pgvector_server import connect


def payloads_in_postgres(store):
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute(f'SELECT payload FROM "{store["config"]["collection_name"]}"')
        rows = [row[0] for row in cur.fetchall()]
    conn.close()
    return rows


def test_from_config_with_pgvector_scopes_add_search_get_delete_per_key(pgvector_store):
    ltm = Mem0LongTermMemory.from_config(
        "pg-job", {LongTermMemoryOptions.VECTOR_STORE.key: pgvector_store})
    try:
        assert isinstance(ltm.memory.vector_store, SerializedVectorStore)  # pool raises when full
        ltm.switch_context("alice", "obs-a", False)
        alice = ltm.get_memory_set("prefs")
        [tea] = alice.add("alice drinks green tea")
        alice.add("alice owns a dog called Biscuit")
        ltm.switch_context("bob", "obs-b", False)
        bob = ltm.get_memory_set("prefs")
        [coffee] = bob.add("bob drinks black coffee")

        assert [i.value for i in alice.search("what does the customer drink", limit=1)] == [
            "alice drinks green tea"]
        assert [i.value for i in bob.search("green tea", limit=5)] == ["bob drinks black coffee"]
        assert sorted(i.value for i in alice.get()) == ["alice drinks green tea",
                                                         "alice owns a dog called Biscuit"]
        assert bob.get(tea) == [] and bob.delete(tea) == []  # alice's id is not bob's
        assert [i.id for i in alice.get(tea)] == [tea]
        assert alice.delete(tea) == [tea]
        assert [i.value for i in alice.get()] == ["alice owns a dog called Biscuit"]
        assert [i.id for i in bob.get()] == [coffee]

        # what Postgres holds: the key as its own text, the job as user, the set as run
        scopes = sorted((p["user_id"], p["agent_id"], p["run_id"], p["data"])
                        for p in payloads_in_postgres(pgvector_store))
        assert scopes == [("pg-job", "alice", "prefs", "alice owns a dog called Biscuit"),
                          ("pg-job", "bob", "prefs", "bob drinks black coffee")]
    finally:
        ltm.close()


def test_a_second_process_view_of_the_same_table_sees_the_same_memories(pgvector_store):
    """Two independent clients (as two TaskManagers would be) share one store."""
    first = Mem0LongTermMemory.from_config(
        "pg-job", {LongTermMemoryOptions.VECTOR_STORE.key: pgvector_store})
    first.switch_context("carol", "o1", False)
    [note] = first.get_memory_set("notes").add("carol moved to Lisbon")
    first.close()
    second = Mem0LongTermMemory.from_config(
        "pg-job", {LongTermMemoryOptions.VECTOR_STORE.key: pgvector_store})
    try:
        second.switch_context("carol", "o2", False)
        assert [i.id for i in second.get_memory_set("notes").search("Lisbon")] == [note]
        second.switch_context("dave", "o3", False)
        assert second.get_memory_set("notes").get() == []
    finally:
        second.close()


def test_a_table_of_another_dimension_is_refused_naming_both_sizes(pgvector_store):
    table = pgvector_store["config"]["collection_name"]
    with connect(pgvector_store) as conn, conn.cursor() as cur:
        cur.execute(f'CREATE TABLE "{table}" (id uuid PRIMARY KEY, vector vector(8), '
                    "payload jsonb)")
    conn.close()
    with pytest.raises(ValueError, match=f"'{table}' holds 8-dimensional .* produces 384"):
        acquire_memory(StoreSpec("pg-job", vector_store=pgvector_store, embedder="hashing"))


def test_an_unreachable_server_is_named_without_its_password(pgvector_store):
    from tests.pgvector.server import free_port

    port = free_port()
    store = {"provider": "pgvector",
             "config": dict(pgvector_store["config"], port=port, password="s3cret-pw")}
    with pytest.raises(ConnectionError, match=f"pgvector store at 127.0.0.1:{port}/mem0") as e:
        acquire_memory(StoreSpec("pg-job", vector_store=store, embedder="hashing"))
    assert "s3cret-pw" not in str(e.value)


def test_many_worker_threads_on_many_keys_never_see_each_others_items(pgvector_store):
    memory, release = acquire_memory(
        StoreSpec("stress-job", vector_store=pgvector_store, embedder="hashing"))
    try:
        outcome = stress(memory, "stress-job", threads=16, keys=32, rounds=24)
    finally:
        release()
    assert outcome.operations == 32 * 24
    assert outcome.failures == []
    assert outcome.leaks == []
    assert outcome.lost_or_foreign_rows == {}


def test_unguarded_mem0_pgvector_fails_under_16_threads_which_is_why_it_is_guarded(
        pgvector_store):
    """The reason for the guard, measured: psycopg2's pool raises instead of waiting."""
    from mem0.vector_stores import pgvector as mem0_pgvector

    if mem0_pgvector.PSYCOPG_VERSION != 2:
        pytest.skip("psycopg3's pool waits for a free connection")
    memory, release = acquire_memory(
        StoreSpec("raw-job", vector_store=pgvector_store, embedder="hashing"))
    raw = memory.vector_store.inner
    errors: list[str] = []

    def insert(n):
        try:
            raw.insert([[0.1] * 384], [{"user_id": "raw-job", "agent_id": f"k{n}"}],
                       [str(uuid.uuid4())])
        except psycopg2.pool.PoolError as error:
            errors.append(str(error))

    try:
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(insert, range(400)))
        assert errors and set(errors) == {"connection pool exhausted"}
    finally:
        release()
