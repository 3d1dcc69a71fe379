"""The vector-store resource (``Mem0VectorStore``) on pgvector searches as long-term memory
does (one search object, ``providers/pgvector/search``): a key up to ``exact_search_up_to``
rows is ranked exactly whatever the HNSW index finds, and above it the recall checks catch
an index that misses the nearest rows. Both keys are the resource's own config's.

The table: 4,000 random rows, 2,400 of key "big", and a deliberately poor HNSW graph
(m 2, ef_construction 4), on which HNSW finds few of a query's nearest rows."""

import logging

import pytest

from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.providers.pgvector import search as pgvector_search
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
from tests.pgvector.random_rows import BIG_SHARE, FENCE, ROWS, fill_random_rows
from tests.pgvector.test_pgvector_recall_checks import queries, rebuild_hnsw
from tests.pgvector.test_pgvector_scope_index import BIG, exact_top
from tests.vector_stores.conftest import lookup


@pytest.fixture
def resource(pgvector_store):
    """``resource(**settings)``: the resource on this test's table (filled, poor HNSW)."""
    opened = []

    def make(**settings):
        store = Mem0VectorStore("pgvector", {**pgvector_store["config"], **settings},
                                embedding_model="embedder")
        store.open(lookup(embedder=HashingEmbedding()))
        if not opened:
            fill_random_rows(pgvector_store, ROWS, int(ROWS * BIG_SHARE), 100)
            rebuild_hnsw(pgvector_store, m=2, ef_construction=4)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def top5(store, query):
    return [d.id for d in store.query(vector=query, limit=5, filters=BIG)]


def test_the_resource_ranks_a_key_up_to_exact_search_up_to_rows_exactly(resource,
                                                                         pgvector_store):
    store = resource()  # the default bound (10,000) is above key "big"'s 2,400 rows
    asked = list(queries(10))
    assert len(asked) == 10
    assert [top5(store, q) for q in asked] == [exact_top(pgvector_store, q, "big", 5)
                                               for q in asked]


def test_the_resources_recall_checks_rank_a_key_hnsw_misses_exactly(resource, pgvector_store,
                                                                    caplog):
    store = resource(exact_search_up_to=FENCE)  # key "big" is above it: HNSW serves it
    with caplog.at_level(logging.WARNING, logger=pgvector_search.__name__):
        for query in queries(pgvector_search.RECALL_FIRST_CHECKS + 4):
            assert top5(store, query) == exact_top(pgvector_store, query, "big", 5)
    switched = [r.getMessage() for r in caplog.records if "'min_recall'" in r.getMessage()]
    assert len(switched) == 1 and "ranks that key's searches exactly" in switched[0]


def test_the_resource_keeps_hnsw_with_min_recall_0(resource, pgvector_store):
    store = resource(exact_search_up_to=FENCE, min_recall=0)
    found = [len(set(top5(store, q)) & set(exact_top(pgvector_store, q, "big", 5)))
             for q in queries(10)]
    assert sum(found) < 40  # the poor graph, unchecked: HNSW's own (approximate) hits


@pytest.mark.parametrize(("key", "value"), [("exact_search_up_to", -1),
                                            ("min_recall", 2)])
def test_a_bad_search_setting_of_the_resource_is_refused_naming_the_key(pgvector_store, key,
                                                                        value):
    with pytest.raises(ValueError, match=f"'{key}'"):
        Mem0VectorStore("pgvector", {**pgvector_store["config"], key: value},
                        embedding_model="embedder")

