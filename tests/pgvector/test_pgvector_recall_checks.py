"""Above ``exact_search_up_to`` Mem0's HNSW index serves a search, and how many of the true
nearest rows it finds depends on the vectors. So the store checks: the first eight
HNSW-served searches of a table, then one in 256, run again exactly and the two top 5s are
compared (the exact hits are the ones returned). When the checks find less than the vector
store config's ``min_recall`` (0.9 unless set), the table's searches are ranked exactly from
then on, and one warning says so; ``min_recall`` 0 checks nothing.

The tables are the ``filled_store`` fixture's: 4,000 random rows, 2,400 of them of key "big".
"""

import logging

import numpy as np
import pytest

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.providers.pgvector import search as pgvector_search
from tests.pgvector.random_rows import FENCE
from tests.pgvector.recording import selects
from tests.pgvector.test_pgvector_scope_index import BIG, exact_top, warnings
from tests.pgvector.test_pgvector_server import connect

EVERY_ROW = "fence AS MATERIALIZED (SELECT true AS exact)"  # ranked exactly, rows not counted
SKIP_COUNT = "fence AS MATERIALIZED (SELECT false AS exact)"  # HNSW, rows not counted
FIRST, EVERY = pgvector_search.RECALL_FIRST_CHECKS, pgvector_search.RECALL_CHECK_EVERY


def rebuild_hnsw(store, **options):
    """Mem0's HNSW index of ``store``'s table built again with ``options``."""
    table = store["config"]["collection_name"]
    with connect(store) as conn, conn.cursor() as cur:
        cur.execute(f'DROP INDEX "{table}_hnsw_idx"')
        cur.execute(f'CREATE INDEX "{table}_hnsw_idx" ON "{table}" USING hnsw '
                    "(vector vector_cosine_ops) WITH ("
                    + ", ".join(f"{name} = {value}" for name, value in options.items()) + ")")
    conn.close()


def search_big(memory, query, top_k=60):
    hits = memory.vector_store.search("q", query, top_k=top_k, filters=BIG)
    return [hit.id for hit in sorted(hits, key=lambda hit: -hit.score)]


def queries(count):
    rng = np.random.default_rng(11)
    return [rng.standard_normal(384).tolist() for _ in range(count)]


def test_a_table_whose_hnsw_searches_miss_the_nearest_rows_is_ranked_exactly_from_then_on(
        fenced, caplog):
    memory, store, sent = fenced()
    rebuild_hnsw(store, m=2, ef_construction=4)  # a deliberately poor graph
    with caplog.at_level(logging.WARNING, logger=pgvector_search.__name__):
        for query in queries(FIRST + 2):
            assert search_big(memory, query)[:5] == exact_top(store, query, "big", 5)
    searches = selects(sent, "ORDER BY distance")
    fences = ["hnsw" if f"count(*) <= {FENCE} " in s or SKIP_COUNT in s else
              "exact" if EVERY_ROW in s else "?" for s in searches]
    # eight checked searches (HNSW, then exactly), then exact only
    assert fences == ["hnsw", "exact"] * FIRST + ["exact", "exact"]
    switched = [w.getMessage() for w in warnings(caplog) if "'min_recall'" in w.getMessage()]
    assert len(switched) == 1, switched
    assert f"{store['config']['collection_name']!r}" in switched[0]
    assert "ranks that key's searches exactly" in switched[0]


def test_a_table_whose_hnsw_searches_find_the_nearest_rows_keeps_hnsw_and_checks_one_in_256(
        fenced, caplog):
    memory, store, sent = fenced()
    rebuild_hnsw(store, m=16, ef_construction=200)  # finds all 5 in (nearly) every search
    with caplog.at_level(logging.WARNING, logger=pgvector_search.__name__):
        for query in queries(EVERY + 4):
            search_big(memory, query, top_k=5)
    searches = selects(sent, "ORDER BY distance")
    checked = [n - count for count, n in enumerate(
        n for n, s in enumerate(searches) if EVERY_ROW in s)]  # the searches checked
    assert checked == [*range(1, FIRST + 1), EVERY]
    assert not [w for w in warnings(caplog) if "'min_recall'" in w.getMessage()]


def test_min_recall_0_checks_nothing(fenced):
    memory, store, sent = fenced(min_recall=0)
    rebuild_hnsw(store, m=2, ef_construction=4)
    for query in queries(4):
        search_big(memory, query)
    assert not [s for s in selects(sent, "ORDER BY distance") if EVERY_ROW in s]


@pytest.mark.parametrize("value", [-0.1, 1.5, "0.9", True, float("nan")])
def test_min_recall_outside_0_to_1_is_refused_naming_the_key(pgvector_store, value):
    config = {**pgvector_store["config"], "min_recall": value}
    with pytest.raises(ValueError, match="'min_recall' must be a number from 0 to 1"):
        acquire_memory(StoreSpec("job", vector_store={**pgvector_store, "config": config},
                                 embedder="hashing"))


def test_the_checks_are_per_key_a_key_hnsw_misses_is_exact_and_the_others_keep_hnsw(
        fenced, caplog):
    memory, store, sent = fenced(exact_search_up_to=10)  # the 16-row keys are above it too
    rebuild_hnsw(store, m=2, ef_construction=4)
    for query in queries(FIRST + 1):
        search_big(memory, query)
    sent.clear()
    search_big(memory, queries(1)[0])
    [big] = selects(sent, "ORDER BY distance")
    assert EVERY_ROW in big  # "big" failed its checks: exact, not counted
    sent.clear()
    small = {**BIG, "agent_id": "k7"}
    memory.vector_store.search("q", queries(1)[0], top_k=5, filters=small)
    first = selects(sent, "ORDER BY distance")[0]
    assert EVERY_ROW not in first and f"count(*) <= {10} " in first  # k7 is counted, not exact
