"""Expiry, beyond the conformance kit: the retention part of the contract
(:mod:`flink_agents_ltm.testing.conformance.expiry`) runs on every implementation through
test_contract.py; here, what only a store's own rows and files show (expiry then a sweep is
erasure) and an embedded store file from before expiry."""

import uuid

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.testing.conformance.core import START, MemoryClock, bound
from tests.memory.contracts import implementation
from tests.memory.test_mem0_rows import files_mentioning

# ------------------------------------------------------------------ expiry is erasure


def test_after_expiry_and_a_sweep_the_text_is_in_no_file_of_the_embedded_store(tmp_path):
    memory, release = acquire_memory(StoreSpec(job_id="expiry", embedder="hashing",
                                               base_dir=tmp_path))
    try:
        clock = MemoryClock()
        ltm = Mem0LongTermMemory("expiry", memory, clock=clock)
        marker = f"passport-{uuid.uuid4().hex}"
        bound(ltm, "customer-7").add([f"{marker} number one", f"{marker} number two"], ttl=60)
        bound(ltm, "customer-8").add("someone else's note")
        assert files_mentioning(tmp_path, marker)  # the check sees the text while stored
        clock.advance(60)
        assert files_mentioning(tmp_path, marker)  # expired is hidden, not yet erased

        assert ltm.sweep_expired() == 2
        assert files_mentioning(tmp_path, marker) == []
        assert files_mentioning(tmp_path, "someone else's note")
    finally:
        release()


def test_after_expiry_and_a_sweep_the_text_is_in_no_row_of_pgvector(pgvector_session):
    marker = f"passport-{uuid.uuid4().hex}"
    with implementation("mem0-pgvector", pgvector=pgvector_session[0]) as impl:
        clock = MemoryClock()
        impl.ltm.set_clock(clock)
        [item] = bound(impl.ltm, "customer-7").add(f"{marker} number one", ttl=60)
        bound(impl.ltm, "customer-8").add("someone else's note")
        store = impl.ltm.memory.vector_store
        pg = getattr(store, "inner", store)

        def rows_mentioning(text):
            with pg._get_cursor() as cur:
                cur.execute(f"SELECT id FROM {pg.collection_name} "  # our own table
                            "WHERE payload::text LIKE %s", (f"%{text}%",))
                return [str(row[0]) for row in cur.fetchall()]

        clock.advance(60)
        assert rows_mentioning(marker) == [item]
        assert impl.ltm.sweep_expired() == 1
        assert rows_mentioning(marker) == []
        assert len(rows_mentioning("someone else's note")) == 1


def test_an_embedded_store_file_from_before_expiry_gets_the_column_and_its_rows_never_expire(
        tmp_path):
    import sqlite3

    from flink_agents_ltm.integrations.mem0.providers.embedded.store import EmbeddedVectorStore

    path = str(tmp_path / "vectors.sqlite3")
    scope = {"user_id": "j", "agent_id": "k", "run_id": "n"}
    old = EmbeddedVectorStore(path, 3)
    old.insert([[1.0, 0.0, 0.0]], [{**scope, "data": "written long ago"}], ["a"])
    old.close()
    with sqlite3.connect(path) as conn:  # the file as the store wrote it before expiry
        conn.execute("DROP INDEX vectors_expiry")
        conn.execute("ALTER TABLE vectors DROP COLUMN expires_at")
    conn.close()

    store = EmbeddedVectorStore(path, 3)
    try:
        visible = {**scope, "NOT": [{"expires_at": {"lte": START}}]}
        assert [hit.id for hit in store.search("q", [1.0, 0.0, 0.0], 5, visible)] == ["a"]
        store.insert([[0.0, 1.0, 0.0]], [{**scope, "data": "new", "expires_at": START}], ["b"])
        assert [row.id for row in store.list(visible)[0]] == ["a"]
        assert [row.id for row in store.list({"user_id": "j", "expires_at": {"lte": START}}
                                             )[0]] == ["b"]
    finally:
        store.close()
