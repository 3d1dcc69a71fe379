"""The embedded store (SQLite + numpy): the project's filter language in both of Mem0's
spellings, exact scoped search reading only the key's rows, upserts, all-or-nothing
batches, private files, restarts and several processes on one file."""

import json
import stat
import subprocess
import sys
import uuid

import numpy as np
import pytest
from mem0.configs.llms.base import BaseLlmConfig
from mem0.llms.base import LLMBase

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.providers.embedded.store import (
    SCAN_CHUNK,
    EmbeddedVectorStore,
)
from tests.memory.conftest import RecordingMemory, unwrapped

DRINKS = [
    ("green tea", {"kind": "tea", "price": 3, "tags": ["hot", "leaf"], "when": "2024-05-01"}),
    ("black tea", {"kind": "tea", "price": 5, "when": "2024-06-15T10:00:00Z"}),
    ("espresso", {"kind": "coffee", "price": 2.5, "strong": True}),
    ("water", {"price": 0, "note": "Still Water"}),
]
FILTER_CASES = [
    ({"kind": "tea"}, ["black tea", "green tea"]),
    ({"kind": {"eq": "coffee"}}, ["espresso"]),
    ({"kind": {"in": ["coffee", "juice"]}}, ["espresso"]),
    ({"price": {"gt": 2.5}}, ["black tea", "green tea"]),
    ({"price": {"gte": 2.5, "lt": 5}}, ["espresso", "green tea"]),
    ({"price": {"lte": 0}}, ["water"]),
    ({"price": 0}, ["water"]),
    ({"when": {"gte": "2024-06-01"}}, ["black tea"]),
    ({"when": {"lt": "2024-06-15T09:00:00+00:00"}}, ["green tea"]),
    ({"note": {"contains": "Water"}}, ["water"]),
    ({"note": {"contains": "water"}}, []),
    ({"note": {"icontains": "still w"}}, ["water"]),
    ({"strong": True}, ["espresso"]),
    ({"strong": 1}, []),  # a bool is not a number
    ({"kind": "*"}, ["black tea", "espresso", "green tea"]),  # any value, but present
    ({"OR": [{"kind": "coffee"}, {"price": {"lt": 1}}]}, ["espresso", "water"]),
    ({"AND": [{"kind": "tea"}, {"price": {"gt": 4}}]}, ["black tea"]),
    ({"NOT": [{"kind": "tea"}]}, ["espresso", "water"]),
    ({"kind": "tea", "NOT": [{"price": 3}]}, ["black tea"]),
    ({"OR": [{"AND": [{"kind": "tea"}, {"price": 3}]}, {"strong": True}]},
     ["espresso", "green tea"]),
]


@pytest.fixture
def embedded_ltm(tmp_path):
    memory, release = acquire_memory(StoreSpec("test-job", embedder="hashing",
                                               base_dir=tmp_path))
    ltm = Mem0LongTermMemory("test-job", memory)
    yield ltm
    release()


@pytest.fixture
def drinks(embedded_ltm):
    embedded_ltm.switch_context("bar", "obs", False)
    menu = embedded_ltm.get_memory_set("menu")
    for text, metadata in DRINKS:
        menu.add(text, metadata)
    embedded_ltm.switch_context("other-bar", "obs", False)
    embedded_ltm.get_memory_set("menu").add([text for text, _ in DRINKS],
                                            [metadata for _, metadata in DRINKS])
    return menu


@pytest.mark.parametrize(("filters", "expected"), FILTER_CASES, ids=[
    json.dumps(case) for case, _ in FILTER_CASES])
def test_get_and_search_apply_mem0_metadata_filters_within_the_key(drinks, filters, expected):
    assert sorted(item.value for item in drinks.get(filters=filters)) == expected
    found = drinks.search("green black tea espresso water", limit=10, filters=filters)
    assert sorted(item.value for item in found) == expected


# Where a store's own rules differ, the project's filter language decides (api/filters.py):
# ne/nin hold where the field is missing, a list-valued field matches no comparison, and a
# list given as the value means "in".
LANGUAGE_CASES = [
    ({"kind": {"ne": "tea"}}, ["espresso", "water"]),
    ({"kind": {"nin": ["tea"]}}, ["espresso", "water"]),
    ({"kind": ["coffee", "tea"]}, ["black tea", "espresso", "green tea"]),
    ({"tags": "leaf"}, []),
    ({"tags": {"ne": "hot"}}, ["black tea", "espresso", "green tea", "water"]),
]


@pytest.mark.parametrize(("filters", "expected"), LANGUAGE_CASES, ids=[
    json.dumps(case) for case, _ in LANGUAGE_CASES])
def test_the_projects_filter_language_decides_where_the_store_would_differ(
        drinks, filters, expected):
    assert sorted(item.value for item in drinks.get(filters=filters)) == expected
    found = drinks.search("green black tea espresso water", limit=10, filters=filters)
    assert sorted(item.value for item in found) == expected


# What Memory.search hands the store for {"OR": [...], "NOT": [...]}: the top-level logic
# as $or / $not, an AND merged into the top level, where an OR inside it stays "OR".
SEARCH_SPELLING_CASES = [
    ({"OR": [{"tags": "hot"}, {"kind": "coffee"}]}, ["espresso"]),  # a list is no match
    ({"NOT": [{"kind": {"ne": "tea"}}]}, ["black tea", "green tea"]),  # ne holds if missing
    ({"OR": [{"when": {"lt": "2024-06-15T12:00:00+05:00"}}, {"price": 0}],  # ISO dates
      "NOT": [{"kind": "coffee"}]}, ["black tea", "green tea", "water"]),  # order as text
    ({"OR": [{"kind": "tea"}, {"strong": True}],
      "AND": [{"OR": [{"price": {"gte": 5}}, {"price": {"lt": 3}}]}]}, ["black tea", "espresso"]),
]


@pytest.mark.parametrize(("filters", "expected"), SEARCH_SPELLING_CASES, ids=[
    json.dumps(case) for case, _ in SEARCH_SPELLING_CASES])
def test_the_store_reads_the_or_and_not_that_mem0s_search_hands_it(
        embedded_ltm, drinks, filters, expected):
    memory = embedded_ltm._memory
    scope = {"user_id": "test-job", "agent_id": "bar", "run_id": "menu"}
    spelled = memory._process_metadata_filters({**filters, **scope})
    assert {"$or", "$not"} & set(spelled)
    store = unwrapped(memory)
    vector = memory.embedding_model.embed("green black tea espresso water", "search")
    assert sorted(hit.payload["data"] for hit in store.search(
        "q", vector, top_k=10, filters=spelled)) == expected
    [listed] = store.list(filters=spelled)
    assert sorted(row.payload["data"] for row in listed) == expected
    found = memory.search("green black tea espresso water", top_k=10, threshold=0.0,
                          filters={**filters, **scope})["results"]
    assert sorted(row["memory"] for row in found) == expected


def test_a_filter_naming_a_field_mem0_writes_itself_is_not_held_to_the_rows_values(drinks):
    """Long-term memory's filters see metadata, not Mem0's own ``data`` or ``hash``: the
    store gets no part of such a filter that it would answer from those fields."""
    everything = ["black tea", "espresso", "green tea", "water"]
    for filters in ({"NOT": [{"hash": "*"}]}, {"data": {"ne": "water"}}):
        assert sorted(item.value for item in drinks.get(filters=filters)) == everything
        assert sorted(item.value for item in drinks.search(
            "tea", limit=10, filters=filters)) == everything


@pytest.fixture
def crowded(tmp_path):
    """A key whose set holds 600 rows that no filter below accepts, then three that do,
    more similar to the query than those three; Mem0's calls are recorded."""
    memory, release = acquire_memory(StoreSpec("test-job", embedder="hashing",
                                               base_dir=tmp_path))
    recording = RecordingMemory(memory)
    ltm = Mem0LongTermMemory("test-job", recording)
    ltm.switch_context("busy", "obs", False)
    notes = ltm.get_memory_set("notes")
    for first in range(0, 600, 100):
        notes.add([f"tea note {n}" for n in range(first, first + 100)],
                  [{"n": n, "topic": "tea"} for n in range(first, first + 100)])
    notes.add([f"tea shipping {n}" for n in range(1000, 1003)],
              [{"n": n, "topic": "shipping"} for n in range(1000, 1003)])
    recording.calls.clear()
    yield notes, recording.calls
    release()


@pytest.mark.parametrize("filters", [
    {"n": {"gte": 1000}},
    {"topic": {"contains": "ship"}},
    {"OR": [{"topic": "shipping"}, {"n": {"lt": 0}}]},
    # two ORs: Memory.search's merge of a top-level AND would keep only the second
    {"AND": [{"OR": [{"topic": "shipping"}, {"n": {"lt": 0}}]},
             {"OR": [{"n": {"gte": 0}}, {"topic": "none"}]}]},
])
def test_a_filter_beyond_equality_gets_limit_hits_from_one_store_read(crowded, filters):
    notes, calls = crowded
    got = notes.get(filters=filters, limit=2)
    assert [item.value for item in got] == ["tea shipping 1000", "tea shipping 1001"]
    found = notes.search("tea note", filters=filters, limit=2)
    assert len(found) == 2
    assert {item.value for item in found} <= {f"tea shipping {n}" for n in range(1000, 1003)}
    assert calls == ["get_all", "search"]


@pytest.mark.parametrize("filters", [{"price": {"between": [1, 2]}}, {"OR": {"price": 1}},
                                     {"kind": {"in": "tea"}}])
def test_a_malformed_filter_is_refused_naming_the_problem(drinks, filters):
    with pytest.raises((TypeError, ValueError), match="between|OR|takes a (non-empty )?list"):
        drinks.get(filters=filters)


def store_with_keys(path, keys, rows_per_key, dims=16, seed=3):
    store = EmbeddedVectorStore(str(path), dims)
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((keys * rows_per_key, dims)).astype(np.float32)
    payloads = [{"user_id": "job", "agent_id": f"k{n % keys}", "run_id": "notes", "n": n}
                for n in range(len(vectors))]
    store.insert(vectors.tolist(), payloads, [str(uuid.uuid4()) for _ in payloads])
    return store, vectors, payloads


def test_a_scoped_search_is_exact_and_reads_the_key_through_the_scope_index(tmp_path):
    store, vectors, payloads = store_with_keys(tmp_path / "v.sqlite3", keys=10,
                                               rows_per_key=40)
    scope = {"user_id": "job", "agent_id": "k3", "run_id": "notes"}
    assert store.query_plan(scope) == ("SEARCH vectors USING PRIMARY KEY (collection=? AND "
                                       "user_id=? AND agent_id=? AND run_id=?)")
    query = np.random.default_rng(9).standard_normal(16)
    hits = store.search("q", query.tolist(), top_k=7, filters=scope)

    mine = [n for n, p in enumerate(payloads) if p["agent_id"] == "k3"]
    unit = vectors[mine] / np.linalg.norm(vectors[mine], axis=1, keepdims=True)
    cosine = unit @ (query / np.linalg.norm(query))
    best = [mine[i] for i in np.argsort(-cosine)[:7]]
    assert [hit.payload["n"] for hit in hits] == best
    every = store.search("q", query.tolist(), top_k=100, filters=scope)
    assert len(every) == 40  # the key's rows, none of another key
    assert [round(hit.score, 5) for hit in every] == [  # cosine, negatives as 0
        round(max(0.0, float(c)), 5) for c in sorted(cosine, reverse=True)]
    store.close()


def brute_force(vectors, rows, query):
    """``rows`` (positions in ``vectors``) ranked by exact cosine with ``query``, and the
    cosines in that order."""
    unit = vectors[rows] / np.linalg.norm(vectors[rows], axis=1, keepdims=True)
    cosine = unit @ (query / np.linalg.norm(query))
    order = np.argsort(-cosine, kind="stable")
    return [rows[i] for i in order], cosine[order]


def test_a_key_of_many_scan_chunks_is_ranked_exactly_with_each_hits_own_payload(tmp_path):
    rows_per_key = 3 * SCAN_CHUNK + 5  # scored in four chunks, the last one short
    store, vectors, payloads = store_with_keys(tmp_path / "v.sqlite3", keys=3,
                                               rows_per_key=rows_per_key)
    scope = {"user_id": "job", "agent_id": "k1", "run_id": "notes"}
    query = np.random.default_rng(11).standard_normal(16)
    mine = [n for n, p in enumerate(payloads) if p["agent_id"] == "k1"]
    best, cosine = brute_force(vectors, mine, query)
    ids = {row.payload["n"]: row.id for row in store.list(scope, top_k=None)[0]}

    hits = store.search("q", query.tolist(), top_k=25, filters=scope)
    assert [hit.payload["n"] for hit in hits] == best[:25]
    assert [hit.id for hit in hits] == [ids[n] for n in best[:25]]
    assert [hit.score for hit in hits] == pytest.approx(
        [max(0.0, float(c)) for c in cosine[:25]], abs=1e-5)
    every = store.search("q", query.tolist(), top_k=10_000, filters=scope)
    assert [hit.payload["n"] for hit in every] == best  # all of the key, nothing else
    # a scope that pins less than the whole key reads the hits' payloads by id
    partial = store.search("q", query.tolist(), top_k=25, filters={"agent_id": "k1"})
    assert [(hit.id, hit.payload["n"]) for hit in partial] == [(ids[n], n) for n in best[:25]]
    store.close()


def test_equal_scores_rank_in_scope_order_across_scan_chunks(tmp_path):
    store = EmbeddedVectorStore(str(tmp_path / "v.sqlite3"), 4)
    scope = {"user_id": "job", "agent_id": "k", "run_id": "notes"}
    count = 2 * SCAN_CHUNK + 10
    ids = [f"r{n:05d}" for n in range(count)]  # the primary key orders a scope's rows by id
    vectors = [[1.0, 1.0, 0.0, 0.0]] * count
    vectors[SCAN_CHUNK + 3] = vectors[count - 1] = [1.0, 0.0, 0.0, 0.0]  # the two best
    order = list(range(count))
    np.random.default_rng(5).shuffle(order)  # inserted in no particular order
    store.insert([vectors[n] for n in order], [{**scope, "n": n} for n in order],
                 [ids[n] for n in order])
    hits = store.search("q", [1.0, 0.0, 0.0, 0.0], top_k=6, filters=scope)
    assert [hit.payload["n"] for hit in hits] == [SCAN_CHUNK + 3, count - 1, 0, 1, 2, 3]
    store.close()


def test_a_filter_beyond_the_scope_fills_top_k_from_matching_rows_of_every_chunk(tmp_path):
    rows_per_key = 3 * SCAN_CHUNK + 5
    store = EmbeddedVectorStore(str(tmp_path / "v.sqlite3"), 16)
    rng = np.random.default_rng(13)
    vectors = rng.standard_normal((2 * rows_per_key, 16)).astype(np.float32)
    payloads = [{"user_id": "job", "agent_id": f"k{n % 2}", "run_id": "notes", "n": n,
                 "topic": "rare" if n % 97 == 0 else "common"} for n in range(len(vectors))]
    store.insert(vectors.tolist(), payloads, [str(uuid.uuid4()) for _ in payloads])
    scope = {"user_id": "job", "agent_id": "k0", "run_id": "notes"}
    rare = [n for n, p in enumerate(payloads) if p["agent_id"] == "k0" and p["topic"] == "rare"]
    assert len(rare) == 8  # spread over the key's chunks (the other key has its own)
    query = rng.standard_normal(16)
    best, _ = brute_force(vectors, rare, query)

    hits = store.search("q", query.tolist(), top_k=3, filters={**scope, "topic": "rare"})
    assert [hit.payload["n"] for hit in hits] == best[:3]
    every = store.search("q", query.tolist(), top_k=50, filters={**scope, "topic": "rare"})
    assert [hit.payload["n"] for hit in every] == best
    store.close()


def test_an_existing_id_is_replaced_not_duplicated(tmp_path):
    store = EmbeddedVectorStore(str(tmp_path / "v.sqlite3"), 4)
    scope = {"user_id": "job", "agent_id": "k", "run_id": "notes"}
    store.insert([[1, 0, 0, 0]], [{**scope, "data": "first"}], ["a"])
    store.insert([[0, 1, 0, 0]], [{**scope, "data": "second"}], ["a"])
    [[row]] = store.list(scope)
    assert (row.id, row.payload["data"]) == ("a", "second")
    [hit] = store.search("q", [0, 1, 0, 0], top_k=5, filters=scope)
    assert hit.score == pytest.approx(1.0)
    store.close()


def test_a_batch_with_one_bad_row_stores_nothing(tmp_path):
    store = EmbeddedVectorStore(str(tmp_path / "v.sqlite3"), 4)
    scope = {"user_id": "job", "agent_id": "k", "run_id": "notes"}
    with pytest.raises(TypeError, match="JSON values only"):
        store.insert([[1, 0, 0, 0], [0, 1, 0, 0]],
                     [{**scope, "data": "fine"}, {**scope, "data": "bad", "when": object()}],
                     ["a", "b"])
    with pytest.raises(ValueError, match="holds 4-dimensional vectors, got 3"):
        store.insert([[1, 0, 0, 0], [0, 1, 0]], [scope, scope], ["c", "d"])
    assert store.list(scope) == [[]]
    store.close()


def test_the_store_folder_and_files_are_private(tmp_path):
    folder = tmp_path / "job"
    store = EmbeddedVectorStore(str(folder / "v.sqlite3"), 4)
    store.insert([[1, 0, 0, 0]], [{"user_id": "job"}], ["a"])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == ["v.sqlite3", "v.sqlite3-shm", "v.sqlite3-wal"]
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o600}
    store.close()


def test_rows_survive_a_restart_and_a_closed_store_refuses_calls(tmp_path):
    path = str(tmp_path / "v.sqlite3")
    store = EmbeddedVectorStore(path, 4)
    store.insert([[1, 0, 0, 0]], [{"user_id": "job", "data": "kept"}], ["a"])
    store.close()
    with pytest.raises(RuntimeError, match="is closed"):
        store.get("a")
    again = EmbeddedVectorStore(path, 4)
    assert again.get("a").payload["data"] == "kept"
    assert again.col_info()["count"] == 1
    again.close()


WRITES = 200
WRITER = """
import sys
from pathlib import Path
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

ltm = Mem0LongTermMemory("shared-job", acquire_memory(
    StoreSpec("shared-job", embedder="hashing", base_dir=Path(sys.argv[1])))[0])
name = sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()  # both processes start writing at the same moment
for n in range(int(sys.argv[3])):
    ltm.switch_context(f"{name}-key-{n % 6}", "obs", False)
    ltm.get_memory_set("notes").add(f"{name} note {n}")
ltm.switch_context(f"{name}-key-0", "obs", False)
print(len(ltm.get_memory_set("notes").get(limit=1000)), flush=True)
"""


def test_two_processes_write_one_store_at_once_and_lose_nothing(tmp_path):
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, str(WRITES)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                stderr=subprocess.PIPE) for name in ("left", "right")]
    for writer in writers:
        assert writer.stdout.readline().strip() == "ready"
    for writer in writers:
        writer.stdin.write("go\n")
        writer.stdin.flush()
    outputs = [writer.communicate(timeout=180) for writer in writers]
    for writer, (_, errors) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, errors[-3000:]
    key_0_items = len(range(0, WRITES, 6))
    assert [out.strip().splitlines()[-1] for out, _ in outputs] == [str(key_0_items)] * 2

    memory, release = acquire_memory(StoreSpec("shared-job", embedder="hashing",
                                               base_dir=tmp_path))
    try:
        rows = memory.get_all(filters={"user_id": "shared-job"}, top_k=10_000)["results"]
    finally:
        release()
    assert sorted(row["memory"] for row in rows) == sorted(
        f"{name} note {n}" for name in ("left", "right") for n in range(WRITES))
    assert all(row["memory"].startswith(row["agent_id"].split("-")[0]) for row in rows)



class OneFact(LLMBase):
    """A chat model that extracts one fact from whatever it is given."""

    def __init__(self):
        super().__init__(BaseLlmConfig(model="scripted"))

    def generate_response(self, messages, tools=None, tool_choice="auto", **kwargs):
        return json.dumps({"memory": [{"id": "0", "text": "Prefers to be contacted by email",
                                       "attributed_to": "user"}]})


def test_infer_mode_stores_what_the_chat_model_extracted_on_the_embedded_store(tmp_path):
    memory, release = acquire_memory(StoreSpec("job", embedder="hashing", llm=OneFact(),
                                               base_dir=tmp_path))
    try:
        ltm = Mem0LongTermMemory("job", memory, infer=True)
        ltm.switch_context("customer-1", "obs", False)
        prefs = ltm.get_memory_set("prefs")
        [stored] = prefs.add("never call me, I read my email every morning")
        assert prefs.add("email is best, really") == []  # the same fact again: nothing new
        assert [(i.id, i.value) for i in prefs.get()] == [
            (stored, "Prefers to be contacted by email")]
        ltm.switch_context("customer-2", "obs", False)
        assert ltm.get_memory_set("prefs").get() == []
    finally:
        release()
