"""The side table (``<table>_exact``: scope, id, expiry, vector) that ranks a key's rows
exactly: kept by triggers in the transaction of every write, whoever sends it (long-term
memory, Mem0's own methods, plain SQL), built in place for a table made by the previous
release, and never trusted once its triggers are gone (a table dropped and made again)."""

import logging
import time

import numpy as np

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.providers.pgvector import side_table
from tests.pgvector.random_rows import fill_random_rows
from tests.pgvector.recording import record_statements, selects
from tests.pgvector.test_pgvector_scope_index import BIG, exact_top, executed_indexes
from tests.pgvector.test_pgvector_server import connect

PROJECTION = ("id, payload->>'user_id', payload->>'agent_id', payload->>'run_id', CASE WHEN "
              "jsonb_typeof(payload->'expires_at') = 'number' THEN "
              "(payload->>'expires_at')::numeric END, vector::text")


def query_rows(store, statement):
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute(statement)
        rows = cur.fetchall() if cur.description else []
    conn.close()
    return rows


def side_and_main(store):
    """The side table's rows and what they should be (from the main table), as sets."""
    table = store["config"]["collection_name"]
    side = query_rows(store, f'SELECT id, user_id, agent_id, run_id, expires_at, vector::text '
                             f'FROM "{side_table.name(table)}"')
    main = query_rows(store, f'SELECT {PROJECTION} FROM "{table}"')
    return set(side), set(main)


def assert_in_step(store, rows):
    side, main = side_and_main(store)
    assert side == main
    assert len(main) == rows


def test_the_side_table_follows_every_write_of_long_term_memory(pgvector_store):
    memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                               embedder="hashing"))
    ltm = Mem0LongTermMemory("job", memory)
    try:
        ltm.switch_context("alice", "obs", False)
        notes = ltm.get_memory_set("notes")
        kept = notes.add(["green tea", "black coffee", "oolong"], ttl=None)
        [brief] = notes.add("soon gone", ttl=0.001)
        assert_in_step(pgvector_store, 4)
        assert notes.update(kept[0], "white tea", ttl=3600)  # a new vector and an expiry
        assert_in_step(pgvector_store, 4)
        notes.delete(kept[1])
        assert_in_step(pgvector_store, 3)
        time.sleep(0.01)
        assert ltm.sweep_expired() == 1  # expiry is a delete
        assert_in_step(pgvector_store, 2)
        ltm.switch_context("bob", "obs", False)
        ltm.get_memory_set("notes").add("bob's note")
        assert ltm.erase_key("alice") == 2
        side, _ = side_and_main(pgvector_store)
        assert [row[2] for row in side] == ["bob"]
        assert brief not in {str(row[0]) for row in side}
    finally:
        release()


def test_the_side_table_follows_mem0s_own_writes_and_plain_sql(pgvector_store):
    memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                               embedder="hashing"))
    table = pgvector_store["config"]["collection_name"]
    pg = memory.vector_store.inner
    try:
        ids = [f"00000000-0000-4000-8000-00000000000{n}" for n in range(3)]
        vectors = np.random.default_rng(3).standard_normal((3, 384)).tolist()
        type(pg).insert(pg, vectors, [{"user_id": "job", "agent_id": "k", "run_id": "s",
                                       "expires_at": 5.5}] * 3, ids)
        assert_in_step(pgvector_store, 3)
        type(pg).update(pg, ids[0], vector=vectors[1], payload={"user_id": "job",
                                                                 "agent_id": "other"})
        assert_in_step(pgvector_store, 3)
        type(pg).delete(pg, ids[2])
        assert_in_step(pgvector_store, 2)
        query_rows(pgvector_store, f'UPDATE "{table}" SET payload = payload || '
                                   """'{"expires_at": "not a number"}'""")
        side, _ = side_and_main(pgvector_store)
        assert {row[4] for row in side} == {None}  # only numbers bound a search's expiry
        query_rows(pgvector_store, f'TRUNCATE "{table}"')
        assert side_and_main(pgvector_store) == (set(), set())
    finally:
        release()


def drop_side_table(store):
    """The table as the previous release left it: no side table, no triggers."""
    table = store["config"]["collection_name"]
    query_rows(store, f'DROP TABLE "{side_table.name(table)}"; DROP FUNCTION '
                      f'"{side_table.name(table)}_sync"() CASCADE')


def test_a_table_of_the_previous_release_gets_its_side_table_when_a_store_opens_it(
        pgvector_store):
    _, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                          embedder="hashing"))
    release()
    drop_side_table(pgvector_store)
    fill_random_rows(pgvector_store, 600, 400, 10)  # written by the previous release
    memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                               embedder="hashing"))
    try:
        assert_in_step(pgvector_store, 600)
        query = np.random.default_rng(5).standard_normal(384).tolist()
        hits = memory.vector_store.search("q", query, top_k=5, filters=BIG)
        assert [h.id for h in sorted(hits, key=lambda h: -h.score)] == exact_top(
            pgvector_store, query, "big", 5)
    finally:
        release()


def test_a_search_ranks_a_key_through_the_side_table_and_the_main_table_without_it(
        pgvector_store):
    memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                               embedder="hashing"))
    table = pgvector_store["config"]["collection_name"]
    try:
        fill_random_rows(pgvector_store, 600, 400, 10)
        query = np.random.default_rng(9).standard_normal(384).tolist()
        sent = record_statements(memory)
        hits = memory.vector_store.search("q", query, top_k=5, filters=BIG)
        assert [h.id for h in sorted(hits, key=lambda h: -h.score)] == exact_top(
            pgvector_store, query, "big", 5)
        [statement] = selects(sent, "ORDER BY distance")
        assert executed_indexes(pgvector_store, statement) >= {
            f"{side_table.name(table)}_scope_idx"}
        # the table dropped and made again by Mem0 (its reset): the triggers are gone, the
        # side table is stale, so searches rank the main table's rows until it is rebuilt
        memory.vector_store.inner.reset()
        fill_random_rows(pgvector_store, 300, 200, 10)
        hits = memory.vector_store.search("q", query, top_k=5, filters=BIG)
        assert [h.id for h in sorted(hits, key=lambda h: -h.score)] == exact_top(
            pgvector_store, query, "big", 5)
        statement = selects(sent, "ORDER BY distance")[-1]
        assert f"{side_table.name(table)}_scope_idx" not in executed_indexes(
            pgvector_store, statement)
    finally:
        release()


def test_the_side_table_costs_about_the_vectors_again(pgvector_store):
    """Its size next to the main table's (heap, TOAST and indexes, HNSW included)."""
    _, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                          embedder="hashing"))
    table = pgvector_store["config"]["collection_name"]
    try:
        fill_random_rows(pgvector_store, 2000, 1000, 10)
        [(main, side)] = query_rows(
            pgvector_store, f"SELECT pg_total_relation_size('\"{table}\"'), "
                            f"pg_total_relation_size('\"{side_table.name(table)}\"')")
        assert 2000 * 384 * 4 < side < main
    finally:
        release()


def test_a_server_that_refuses_the_side_table_leaves_a_warning_and_mem0s_table_serves(
        pgvector_store, caplog):
    _, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                          embedder="hashing"))
    release()
    drop_side_table(pgvector_store)
    table = pgvector_store["config"]["collection_name"]
    query_rows(pgvector_store, f'CREATE VIEW "{side_table.name(table)}" AS SELECT 1 AS one')
    fill_random_rows(pgvector_store, 600, 400, 10)
    with caplog.at_level(logging.WARNING, logger=side_table.__name__):
        memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                                   embedder="hashing"))
    try:
        # warnings only: caplog holds the whole test's records, and where another test left
        # the package's loggers at INFO, the first open's "built the side table" is one
        refused = [r.getMessage() for r in caplog.records
                   if r.name == side_table.__name__ and r.levelno >= logging.WARNING]
        assert len(refused) == 1 and "could not make the side table" in refused[0]
        query = np.random.default_rng(7).standard_normal(384).tolist()
        hits = memory.vector_store.search("q", query, top_k=5, filters=BIG)
        assert [h.id for h in sorted(hits, key=lambda h: -h.score)] == exact_top(
            pgvector_store, query, "big", 5)
        memory.vector_store.inner.insert([query], [{**BIG, "data": "new"}],
                                         ["00000000-0000-4000-8000-0000000000aa"])  # writes go on
    finally:
        release()


def test_a_side_table_dropped_under_a_running_store_is_forgotten_with_one_warning(
        pgvector_store, caplog):
    memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                               embedder="hashing"))
    table = pgvector_store["config"]["collection_name"]
    try:
        fill_random_rows(pgvector_store, 600, 400, 10)
        query_rows(pgvector_store, f'DROP TABLE "{side_table.name(table)}"')
        with caplog.at_level(logging.WARNING):
            for seed in (1, 2):
                query = np.random.default_rng(seed).standard_normal(384).tolist()
                hits = memory.vector_store.search("q", query, top_k=5, filters=BIG)
                assert [h.id for h in sorted(hits, key=lambda h: -h.score)] == exact_top(
                    pgvector_store, query, "big", 5)
        gone = [r.getMessage() for r in caplog.records if "is gone" in r.getMessage()]
        assert len(gone) == 1, gone
    finally:
        release()
