"""A search counts up to a fence's worth (``exact_search_up_to`` + 1) of the key's rows first:
8 of a 50,000-row key's 11 ms on the server, where HNSW took under 1, and 8 of a 10,000-row
key's 14 ms, where ranking its rows took 6. So the count of a search's filters (a key's set,
with any metadata conditions) is remembered: the next 64 searches with the same filters skip
it (to HNSW above the fence, ranked exactly below), then one counts again, so a key that
crossed the fence since is served the other way; other filters are counted on their own.

The table is the ``filled_store`` fixture's: 4,000 random rows, 2,400 of them of key "big".
"""

import numpy as np

from flink_agents_ltm.integrations.mem0.providers.pgvector import search as pgvector_search
from tests.pgvector.random_rows import FENCE
from tests.pgvector.recording import selects
from tests.pgvector.test_pgvector_scope_index import BIG, SMALL, exact_top
from tests.pgvector.test_pgvector_server import connect

RECOUNT = pgvector_search.RECOUNT_EVERY


FENCES = {f"fence AS MATERIALIZED (SELECT count(*) <= {FENCE} AS exact ": "count",
          "fence AS MATERIALIZED (SELECT false AS exact)": "hnsw",
          "fence AS MATERIALIZED (SELECT true AS exact)": "exact"}


def fences(sent):
    """For each search sent: "count" (its key's rows counted against the fence), else the
    branch it took without counting: "hnsw" or "exact"."""
    found = []
    for statement in selects(sent, "ORDER BY distance"):
        [kind] = [kind for text, kind in FENCES.items() if text in statement]
        found.append(kind)
    return found


QUERY = np.random.default_rng(3).standard_normal(384).tolist()


def test_a_counted_key_skips_the_count_for_64_searches_then_counts_again(fenced):
    memory, store, sent = fenced(min_recall=0)
    for _ in range(RECOUNT + 3):
        hits = memory.vector_store.search("q", QUERY, top_k=10, filters=BIG)
        assert len(hits) == 10 and {h.payload["agent_id"] for h in hits} == {"big"}
    for _ in range(3):  # a key under the fence: counted, then ranked exactly at once
        hits = memory.vector_store.search("q", QUERY, top_k=10, filters=SMALL)
        assert [h.id for h in sorted(hits, key=lambda h: -h.score)] == exact_top(
            store, QUERY, SMALL["agent_id"], 10)
    assert fences(sent) == ["count", *["hnsw"] * RECOUNT, "count", "hnsw",
                            "count", "exact", "exact"]


def test_a_key_that_shrank_below_the_fence_is_ranked_exactly_again_after_the_recount(fenced):
    memory, store, sent = fenced(min_recall=0)
    memory.vector_store.search("q", QUERY, top_k=10, filters=BIG)
    with connect(store) as conn, conn.cursor() as cur:  # "big" keeps 500 of its rows
        cur.execute(f"""DELETE FROM "{store['config']['collection_name']}" WHERE id IN (
            SELECT id FROM "{store['config']['collection_name']}"
            WHERE payload->>'agent_id' = 'big' OFFSET 500)""")
    conn.close()
    for _ in range(RECOUNT + 1):
        hits = memory.vector_store.search("q", QUERY, top_k=10, filters=BIG)
    assert fences(sent) == ["count", *["hnsw"] * RECOUNT, "count"]
    assert [h.id for h in sorted(hits, key=lambda h: -h.score)] == exact_top(
        store, QUERY, "big", 10)
    with connect(store) as conn, conn.cursor() as cur:  # its last search ranked exactly
        cur.execute(selects(sent, "ORDER BY distance")[-1])
        assert [row[4] for row in cur.fetchall()] == [True] * 10
    conn.close()


def test_a_search_with_other_filters_is_counted_on_its_own(fenced):
    memory, _, sent = fenced(min_recall=0)
    memory.vector_store.search("q", QUERY, top_k=10, filters=BIG)
    few = {**BIG, "data": "note 7"}  # one row of "big" has it: ranked exactly, not HNSW
    hits = memory.vector_store.search("q", QUERY, top_k=10, filters=few)
    assert [h.payload["data"] for h in hits] == ["note 7"]
    assert fences(sent) == ["count", "count"]
