"""A scoped search on pgvector reads the key's rows through the scope index (exact), also for
a key large enough for the planner to walk the HNSW index, up to ``exact_search_up_to`` rows
(10,000 unless the vector store config says otherwise); a key above that is searched through
HNSW, still gets ``limit`` rows, and a warning says so once per table.

The statements checked are the ones Mem0's pgvector store really sends: a recording
cursor captures them on their way to the server, then the test asks the server to
EXPLAIN them.
"""

import logging

import numpy as np

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.providers.pgvector import search as pgvector_search
from tests.pgvector.random_rows import BIG_SHARE, ROWS
from tests.pgvector.recording import record_statements, selects
from tests.pgvector.test_pgvector_server import connect


def plan_of(store, statement):
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute(f"EXPLAIN {statement}")
        plan = "\n".join(row[0] for row in cur.fetchall())
    conn.close()
    return plan


def test_scoped_search_and_get_all_of_a_small_key_use_the_scope_index(filled_store, sent):
    memory, store = filled_store
    table = store["config"]["collection_name"]
    ltm = Mem0LongTermMemory("job", memory)
    ltm.switch_context("k7", "obs", False)
    notes = ltm.get_memory_set("notes")
    found = notes.search("note", limit=5)
    listed = notes.get(limit=100)
    assert len(found) == 5 and len(listed) == len(range(int(ROWS * BIG_SHARE) + 7, ROWS, 100))
    [search] = selects(sent, "ORDER BY distance")
    [get_all] = selects(sent, "LIMIT 400")  # get_all over-fetches 4x
    for statement in (search, get_all):
        plan = plan_of(store, statement)
        assert f"{table}_scope_idx" in plan, plan
        # the one scan allowed: the catalog's, whether the side table's triggers exist
        assert [line for line in plan.splitlines()
                if "Seq Scan" in line and "pg_trigger" not in line] == [], plan


def executed_indexes(store, statement):
    """The indexes the statement's plan really scanned (EXPLAIN ANALYZE: a branch the
    statement skipped is never executed)."""
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute("SET hnsw.iterative_scan = relaxed_order")
        cur.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}")
        plan = cur.fetchone()[0][0]["Plan"]
    conn.close()
    found, nodes = set(), [plan]
    while nodes:
        node = nodes.pop()
        if node.get("Actual Loops", 0) > 0 and "Index Name" in node:
            found.add(node["Index Name"])
        nodes.extend(node.get("Plans", []))
    return found


def exact_top(store, vector, key, k):
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute("SET enable_indexscan = off")
        cur.execute(f"""SELECT id FROM "{store['config']['collection_name']}"
            WHERE payload->>'agent_id' = %s ORDER BY vector <=> %s::vector LIMIT %s""",
                    (key, "[" + ",".join(map(repr, vector)) + "]", k))
        found = [str(row[0]) for row in cur.fetchall()]
    conn.close()
    return found


BIG = {"user_id": "job", "agent_id": "big", "run_id": "notes"}
SMALL = {"user_id": "job", "agent_id": "k7", "run_id": "notes"}


def warnings(caplog):
    return [r for r in caplog.records if r.name == pgvector_search.__name__]


def test_a_key_holding_most_rows_is_still_ranked_exactly_through_the_scope_index(
        filled_store, sent):
    memory, store = filled_store
    table = store["config"]["collection_name"]
    rng = np.random.default_rng(5)
    for _ in range(5):
        query = rng.standard_normal(384).tolist()
        hits = memory.vector_store.search("q", query, top_k=60, filters=BIG)
        assert len(hits) == 60
        assert {hit.payload["agent_id"] for hit in hits} == {"big"}
        ranked = sorted(hits, key=lambda hit: -hit.score)
        assert [hit.id for hit in ranked[:10]] == exact_top(store, query, "big", 10)
    search = selects(sent, "ORDER BY distance")[-1]
    assert plan_of(store, search).count(f"{table}_hnsw_idx") == 1, plan_of(store, search)
    assert f"{table}_hnsw_idx" not in executed_indexes(store, search)


def test_a_key_above_exact_search_up_to_is_searched_through_hnsw_gets_limit_rows_and_warns_once(
        filled_store, caplog):
    _, store = filled_store
    table = store["config"]["collection_name"]
    fence = int(ROWS * BIG_SHARE) - 1  # "big" is one row above it
    fenced = {**store, "config": {**store["config"], "exact_search_up_to": fence}}
    memory, release = acquire_memory(StoreSpec("job", vector_store=fenced, embedder="hashing"))
    try:
        sent = record_statements(memory)
        query = np.random.default_rng(5).standard_normal(384).tolist()
        with caplog.at_level(logging.WARNING, logger=pgvector_search.__name__):
            small = memory.vector_store.search("q", query, top_k=60, filters=SMALL)
            assert small and not warnings(caplog)  # exact: nothing to warn about
            hits = memory.vector_store.search("q", query, top_k=60, filters=BIG)
            memory.vector_store.search("q", query, top_k=5, filters=BIG)
        search = selects(sent, "ORDER BY distance")[1]
        assert f"count(*) <= {fence} " in search
        assert f"{table}_hnsw_idx" in executed_indexes(store, search)
        assert len(hits) == 60  # an HNSW scan without iterative scans stops at ~ef_search * 60 %
        assert {hit.payload["agent_id"] for hit in hits} == {"big"}
        [warning] = warnings(caplog)  # once per table, not per search
        assert "'exact_search_up_to'" in warning.getMessage()
        assert f"{table!r} matched more than {fence} rows" in warning.getMessage()
    finally:
        release()
