"""A long-term memory search on pgvector is one statement, in one round trip: no
``BEGIN``/``ROLLBACK`` around it (autocommit), and Mem0's keyword statement is answered
from it, with the very scores Mem0's own statement gives. Above ``exact_search_up_to`` it runs
with ``hnsw.ef_search = HNSW_EF_SEARCH``, a setting of the store's sessions.

The statements are the ones really sent (a recording cursor); the server is real.
"""

import numpy as np
import pytest

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.providers.pgvector import search as pgvector_search
from flink_agents_ltm.integrations.mem0.providers.pgvector.store import HNSW_EF_SEARCH
from tests.pgvector.random_rows import fill_random_rows
from tests.pgvector.recording import record_statements
from tests.pgvector.test_pgvector_server import connect

NOTES = [f"{drink} with {friend} on day {day}" for day in range(3)
         for drink, friend in (("coffee", "Ann"), ("tea", "Bob"), ("coffee", "Cleo"),
                               ("juice", "Dan"), ("water", "Eve"), ("coffee", "Finn"))]


@pytest.fixture
def memory(pgvector_store):
    memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                               embedder="hashing"))
    yield memory
    release()


@pytest.fixture
def sent(memory):
    return record_statements(memory)


def results(found):
    return [(item.id, pytest.approx(item.score, abs=1e-6)) for item in found]


def test_a_search_is_one_statement_in_autocommit_with_mem0s_keyword_scores(memory, sent):
    ltm = Mem0LongTermMemory("job", memory)
    for key in ("k1", "k2"):
        ltm.switch_context(key, "obs", False)
        ltm.get_memory_set("notes").add(NOTES)
    ltm.switch_context("k1", "obs", False)
    notes = ltm.get_memory_set("notes")
    sent.clear()
    ours = notes.search("coffee", limit=8)
    assert len(sent) == 1, sent
    [(statement, autocommit)] = sent
    assert autocommit and "ts_rank_cd" in statement and "ORDER BY distance" in statement

    pg = memory.vector_store.inner
    ours_methods = pg.search, pg.keyword_search
    del pg.search, pg.keyword_search  # Mem0's own methods: a search, then a keyword statement
    try:
        sent.clear()
        mem0s = notes.search("coffee", limit=8)
        assert len(sent) == 2
    finally:
        pg.search, pg.keyword_search = ours_methods
    # the key's 18 rows are all hits: Mem0 scored the same rows, and 9 of them match
    assert results(ours) == results(mem0s)
    assert {item.value.split()[0] for item in ours} == {"coffee"}  # the keyword decided


def test_keyword_search_for_another_query_or_key_runs_mem0s_statement(memory):
    ltm = Mem0LongTermMemory("job", memory)
    for key in ("k1", "k2"):
        ltm.switch_context(key, "obs", False)
        ltm.get_memory_set("notes").add(NOTES)
    store, pg = memory.vector_store, memory.vector_store.inner
    scope = {"user_id": "job", "agent_id": "k1", "run_id": "notes"}
    vector = np.random.default_rng(3).standard_normal(384).tolist()
    store.search(query="coffee", vectors=vector, top_k=5, filters=scope)  # 5 of 18 rows
    for query, filters, matching in (("tea", scope, 3),
                                     ("coffee", {**scope, "agent_id": "k2"}, 9)):
        ours = store.keyword_search(query=query, top_k=60, filters=filters)
        mem0s = type(pg).keyword_search(pg, query, 60, filters)
        assert len(ours) == matching and results(ours) == results(mem0s)
    # the search's own: only its hits' scores, taken once
    hits = store.search(query="coffee", vectors=vector, top_k=5, filters=scope)
    scored = store.keyword_search(query="coffee", top_k=5, filters=scope)
    assert {row.id for row in scored} <= {hit.id for hit in hits}
    assert len(store.keyword_search(query="coffee", top_k=5, filters=scope)) == 5  # Mem0's


ROWS, BIG = 3000, 2000


def test_above_the_fence_searches_run_with_the_sessions_larger_ef_search(pgvector_store):
    fenced = {**pgvector_store, "config": {**pgvector_store["config"],
                                           "exact_search_up_to": BIG // 2}}
    memory, release = acquire_memory(StoreSpec("job", vector_store=fenced, embedder="hashing"))
    table = pgvector_store["config"]["collection_name"]
    try:
        fill_random_rows(pgvector_store, ROWS, BIG, 50)
        scope = {"user_id": "job", "agent_id": "big", "run_id": "notes"}
        rng = np.random.default_rng(11)
        queries = [rng.standard_normal(384).tolist() for _ in range(6)]
        ours = [[hit.id for hit in memory.vector_store.search(
            query="q", vectors=q, top_k=10, filters=scope)] for q in queries]

        def mem0s(ef_search):
            with connect(pgvector_store) as conn, conn.cursor() as cur:
                cur.execute(f"SET hnsw.iterative_scan = relaxed_order; "
                            f"SET hnsw.ef_search = {ef_search}")
                found = []
                for q in queries:
                    cur.execute(f"""SELECT id::text FROM (SELECT id, vector <=> %s::vector AS d
                        FROM "{table}" WHERE payload->>'user_id' = 'job' AND
                        payload->>'agent_id' = 'big' AND payload->>'run_id' = 'notes'
                        ORDER BY d LIMIT 10) hits ORDER BY d""",
                                (pgvector_search.vector_text(q),))
                    found.append([row[0] for row in cur.fetchall()])
            conn.close()
            return found

        larger, default = mem0s(HNSW_EF_SEARCH), mem0s(40)
        differ = [n for n in range(len(queries)) if larger[n] != default[n]]
        assert len(differ) >= 3  # else this test could not tell them apart
        assert ours == larger  # with ef_search 40, ours would be the default's top 10s
        with memory.vector_store.inner._get_cursor() as cur:  # a connection of the store's
            cur.execute("SHOW hnsw.ef_search")
            assert cur.fetchone()[0] == str(HNSW_EF_SEARCH)
    finally:
        release()
