"""Every operator means the same on every store: what Qdrant, pgvector and FAISS return
for a filter is exactly what the reference semantics accept, whether the store evaluated
the filter itself, in part, or not at all; and the embedded store, which evaluates the
language itself, answers exactly that in both spellings Mem0 hands it."""

import pytest

from flink_agents_ltm.api.filters import FilterError, matches, parse_filter
from flink_agents_ltm.api.vector_stores import Document
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore

DOCUMENTS = [
    ("d1", "green tea from japan", {"topic": "tea", "year": 2019, "price": 4.5, "vip": True,
                                    "title": "Sencha Guide", "tags": ["jp"],
                                    "day": "2019-04-01"}),
    ("d2", "black tea from india", {"topic": "tea", "year": 2021, "price": 3, "vip": False,
                                    "title": "Assam basics", "day": "2021-06-30",
                                    "origin": {"country": "India"}}),
    ("d3", "espresso coffee", {"topic": "coffee", "year": 2023, "price": 2.5,
                               "title": "ESPRESSO at home", "day": "2023-01-15T10:00:00+05:00"}),
    # look-alikes: a year and a flag written as text
    ("d4", "cold brew coffee", {"topic": "coffee", "year": "2020", "vip": "true",
                                "title": "cold brew", "day": 20200101}),
    ("d5", "herbal infusion", {"topic": "herbal", "year": 2021.0, "price": None}),
    # no topic; LIKE's wildcards in the title
    ("d6", "tea tasting notes", {"year": 2022, "title": "100% tea_notes", "day": "2022-12-31"}),
]

FILTERS = [
    {"topic": "tea"},
    {"topic": {"eq": "coffee"}},
    {"topic": {"ne": "tea"}},
    {"topic": ["tea", "herbal"]},
    {"topic": {"in": ["coffee"]}},
    {"topic": {"nin": ["tea"]}},
    {"year": 2021},
    {"year": "2020"},
    {"year": {"gt": 2020}},
    {"year": {"gte": 2021}},
    {"year": {"lt": 2021}},
    {"year": {"lte": 2021}},
    {"year": {"gte": 2020, "lt": 2023}},
    {"price": {"lt": 4}},
    {"year": {"gt": "2019"}},                      # strings order as text, numbers as numbers
    {"title": {"gte": "E", "lt": "c"}},
    {"day": {"gte": "2021-06-30"}},                # ISO dates order as text ...
    {"day": {"lt": "2023-01-15T06:00:00Z"}},       # ... not as instants (d3 is 05:00Z)
    {"day": {"gte": "2023-01-15T06:00:00Z"}},
    {"day": {"gt": 20000000}},
    {"vip": True},
    {"vip": {"eq": False}},
    {"vip": {"ne": True}},
    {"title": {"contains": "tea"}},
    {"title": {"contains": "%"}},
    {"title": {"contains": "a_n"}},
    {"title": {"icontains": "espresso"}},
    {"title": {"icontains": "GUIDE"}},
    {"title": "*"},
    {"price": "*"},
    {"topic": "tea", "vip": False},
    {"OR": [{"topic": "herbal"}, {"year": {"gte": 2023}}]},
    {"OR": [{"topic": "tea"}, {"topic": "coffee"}], "year": {"gte": 2021}},
    {"NOT": [{"topic": "tea"}]},
    {"NOT": [{"topic": "tea"}, {"title": {"icontains": "brew"}}]},
    {"AND": [{"topic": "coffee"}, {"NOT": [{"year": {"lt": 2022}}]}]},
    {"OR": [{"AND": [{"topic": "tea"}, {"vip": True}]}, {"title": {"contains": "%"}}]},
    {"OR": [{"day": {"lt": "2020"}}, {"year": {"gte": 2023}}], "topic": ["tea", "coffee"]},
    {"user_id": {"ne": "u"}, "topic": "*"},       # scope fields are ordinary fields here
    {"tags": "*"},                                # a list is a value ...
    {"OR": [{"tags": "jp"}, {"topic": "herbal"}]},  # ... that equals no scalar
    {"tags": {"ne": "jp"}, "topic": "tea"},
    {"origin": "*"},                              # so is a dict
    {"OR": [{"origin": "India"}, {"origin": {"contains": "India"}}, {"topic": "herbal"}]},
]


def expected_ids(filters):
    parsed = parse_filter(filters)
    return {doc_id for doc_id, _, metadata in DOCUMENTS if matches(parsed, metadata)}


def test_the_filter_table_is_not_trivial():
    sizes = [len(expected_ids(f)) for f in FILTERS]
    assert all(0 < size < len(DOCUMENTS) for size in sizes), sizes


def test_get_and_query_return_exactly_the_matching_documents_for_every_operator(store):
    store.add([Document(text, metadata, doc_id) for doc_id, text, metadata in DOCUMENTS])
    wrong = []
    for filters in FILTERS:
        expected = expected_ids(filters)
        got = {d.id for d in store.get(filters=filters)}
        found = {d.id for d in store.query("tea coffee infusion", limit=10, filters=filters)}
        if got != expected or found != expected:
            wrong.append((filters, sorted(expected), sorted(got), sorted(found)))
    assert wrong == []


def test_a_small_limit_returns_the_best_matching_documents_in_score_order(store):
    store.add([Document(text, metadata, doc_id) for doc_id, text, metadata in DOCUMENTS])
    for filters in FILTERS:
        everything = store.query("tea", limit=10, filters=filters).documents
        top = store.query("tea", limit=2, filters=filters).documents
        assert [d.id for d in top] == [d.id for d in everything[:2]], filters
        assert [d.score for d in top] == sorted((d.score for d in top), reverse=True)


def test_a_matching_document_is_found_behind_many_closer_ones_that_do_not_match(store):
    """FAISS filters only 2 * top_k neighbours of a search, and a filter left to Python
    sees only what the store returned: both must go on fetching until the store is
    exhausted."""
    store.add([Document(f"tea tea tea number {i}", {"topic": "noise"}) for i in range(80)]
              + [Document("a rare note about shipping", {"topic": "Rare"}, "rare")])
    for filters in ({"topic": "Rare"}, {"topic": {"icontains": "rare"}},
                    {"NOT": [{"topic": "noise"}]}):
        assert [d.id for d in store.query("tea", limit=1, filters=filters)] == ["rare"], filters
        assert [d.id for d in store.get(filters=filters, limit=1)] == ["rare"], filters


def test_delete_by_filter_removes_exactly_the_matching_documents(store):
    store.add([Document(text, metadata, doc_id) for doc_id, text, metadata in DOCUMENTS])
    filters = {"OR": [{"year": {"gte": 2022}}, {"title": {"icontains": "GUIDE"}}]}
    doomed = expected_ids(filters)
    assert set(store.delete(filters=filters)) == doomed
    assert {d.id for d in store.get()} == {doc_id for doc_id, _, _ in DOCUMENTS} - doomed
    assert store.size() == len(DOCUMENTS) - len(doomed)


def test_mem0s_stores_alone_disagree_with_the_reference_which_is_why_python_decides(store):
    """What the raw Mem0 stores answer for filters Mem0 documents; Mem0VectorStore gets the
    reference answer on all of them (the tests above)."""
    store.add([Document(text, metadata, doc_id) for doc_id, text, metadata in DOCUMENTS]
              + [Document(f"tea tea tea {i}", {"topic": "noise"}) for i in range(40)])
    raw = store._store(store.collection, create=False)
    vector = list(store.embed(["tea"])[0])

    def raw_ids(filters, k=10):
        rows = raw.search(query="", vectors=vector, top_k=k, filters=filters)
        return {r.payload.get("flink_agents_id", str(r.id)) for r in rows}

    if store.provider == "qdrant":
        assert raw_ids({"title": {"contains": "sencha"}}) == {"d1"}  # case-folded words:
        assert raw_ids({"title": {"contains": "Guid"}}) == set()  # ... whole ones only
        assert "d3" in raw_ids({"day": {"lt": "2023-01-15T06:00:00Z"}})  # instants, not text
    elif store.provider == "pgvector":
        assert raw_ids({"vip": {"eq": True}}) == set()  # compares 'True' with 'true'
        assert raw_ids({"topic": {"ne": "tea"}}) & {"d6"} == set()  # no topic: dropped
        with pytest.raises(ValueError, match="could not convert string to float"):
            raw_ids({"day": {"gte": "2021-06-30"}})  # orders numbers only
    else:
        assert raw_ids({"topic": "herbal"}, k=1) == set()  # only 2 * top_k neighbours seen
    assert {d.id for d in store.query("tea", limit=1, filters={"topic": "herbal"})} == {"d5"}


REFUSED = [
    {"topic": None},
    {"NOT": {"topic": "tea"}},
    {"year": {"gt": [2020]}},
    {"topic": "te\x00a"},
    {"$or": [{"topic": "tea"}]},
]


def test_a_filter_outside_the_language_is_refused_before_the_store_is_asked(store):
    store.add([Document(text, metadata, doc_id) for doc_id, text, metadata in DOCUMENTS])
    for filters in REFUSED:
        with pytest.raises(FilterError, match="filters"):
            store.get(filters=filters)
        with pytest.raises(FilterError, match="filters"):
            store.delete(filters=filters)
        with pytest.raises(FilterError, match="filters"):
            store.query("tea", filters=filters)
    assert store.size() == len(DOCUMENTS)


def test_the_embedded_store_returns_exactly_the_matching_rows_in_both_of_mem0s_spellings(
        tmp_path):
    """As Mem0 calls it: ``get_all`` hands the filter over as written, ``search`` after its
    rewrite ($or, $not, AND merged into the top level); and the store called directly."""
    memory, release = acquire_memory(StoreSpec("job", embedder="hashing", base_dir=tmp_path))
    try:
        scope = {"user_id": "job", "agent_id": "key", "run_id": "set"}
        for _, text, metadata in DOCUMENTS:
            memory.add(text, **scope, metadata=metadata, infer=False)
        doc_of = {text: doc_id for doc_id, text, _ in DOCUMENTS}
        store = memory.vector_store
        vector = memory.embedding_model.embed("tea coffee infusion", "search")
        wrong = []
        for filters in FILTERS:
            expected = expected_ids(filters)
            stored = {doc_of[row.payload["data"]] for row in store.list(filters, top_k=None)[0]}
            searched = {doc_of[hit.payload["data"]] for hit in store.search(
                "q", vector, top_k=10, filters=filters)}
            answers = [stored, searched]
            if "user_id" not in filters:
                scoped = {**filters, **scope}
                answers.append({doc_of[row["memory"]] for row in memory.get_all(
                    filters=scoped, top_k=10)["results"]})
                answers.append({doc_of[row["memory"]] for row in memory.search(
                    "tea coffee infusion", filters=scoped, top_k=10, threshold=0.0)["results"]})
            if any(answer != expected for answer in answers):
                wrong.append((filters, sorted(expected), [sorted(a) for a in answers]))
        assert wrong == []
    finally:
        release()


def test_a_pgvector_query_the_hnsw_scan_answers_short_runs_again_exactly(
        pgvector_database, hashing):
    """The database bounds HNSW scans (``hnsw.max_scan_tuples = 1``, a setting a DBA may
    make to cap their cost): the index then yields only the first candidates, all of them
    closer rows that the filter drops. The query still gets its ``limit`` matching rows,
    the nearest ones, in exact order: the scan's short answer made it run without the
    index."""
    import numpy as np

    from tests.vector_stores.conftest import _admin, lookup

    admin = _admin(pgvector_database)
    with admin.cursor() as cur:
        cur.execute(f'ALTER DATABASE "{pgvector_database["dbname"]}" '
                    "SET hnsw.max_scan_tuples = 1")
    admin.close()
    store = Mem0VectorStore("pgvector", pgvector_database, embedding_model="embedder",
                            collection="far")
    store.open(lookup(embedder=hashing))
    rng = np.random.default_rng(7)
    query = rng.normal(size=384)
    query /= np.linalg.norm(query)

    def around(centre, n):
        return centre + rng.normal(size=(n, 384)) / np.sqrt(384)

    aside = rng.normal(size=384)
    aside -= (aside @ query) * query  # orthogonal to the query
    near = around(query, 1500)
    far = around(0.3 * query + aside / np.linalg.norm(aside), 12)  # off to one side
    try:
        store.add([Document(f"near {n}", {"group": "near"}, f"near-{n}", v)
                   for n, v in enumerate(near.tolist())]
                  + [Document(f"far {n}", {"group": "far"}, f"far-{n}", v)
                     for n, v in enumerate(far.tolist())])
        similarity = far @ query / np.linalg.norm(far, axis=1)
        nearest_far = [f"far-{n}" for n in np.argsort(-similarity)[:5]]

        found = store.query(vector=query.tolist(), limit=5, filters={"group": "far"}).documents

        assert [d.id for d in found] == nearest_far
        assert [d.score for d in found] == pytest.approx(sorted(similarity, reverse=True)[:5],
                                                         abs=1e-5)
    finally:
        store.close()
    session = _admin(pgvector_database)  # what the index scan alone gives
    with session.cursor() as cur:
        cur.execute("SET hnsw.iterative_scan = relaxed_order; "
                    "SELECT count(*) FROM (SELECT id FROM far WHERE payload->>'group' = 'far' "
                    "ORDER BY vector <=> %s::vector LIMIT 5) AS scan", (str(query.tolist()),))
        assert cur.fetchone()[0] < 5
    session.close()
