"""Holes upstream leaves open: by-id access, scope overrides, limit, per-item metadata, keys."""

import pytest

from tests.memory.conftest import rows_of


@pytest.fixture
def two_keys(ltm):
    """k1 and k2 each hold one item in set 'notes'; returns (k1's set, k1's id, k2's id)."""
    ltm.switch_context("k2", "obs-2", False)
    [k2_id] = ltm.get_memory_set("notes").add("k2 secret tea")
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    [k1_id] = notes.add("k1 tea")
    return notes, k1_id, k2_id


def test_get_by_id_never_returns_an_item_of_another_key(two_keys):
    notes, k1_id, k2_id = two_keys
    assert [item.id for item in notes.get([k1_id, k2_id])] == [k1_id]
    assert notes.get(k2_id) == []


def test_get_by_id_never_returns_an_item_of_another_set(ltm, two_keys):
    notes, k1_id, _ = two_keys
    other = ltm.get_memory_set("other")
    assert other.get(k1_id) == []
    assert other.delete(k1_id) == []
    assert [item.id for item in notes.get(k1_id)] == [k1_id]


def test_delete_by_id_never_deletes_an_item_of_another_key(two_keys, mem0_memory):
    notes, k1_id, k2_id = two_keys
    assert notes.delete([k2_id, k1_id]) == [k1_id]
    assert rows_of(mem0_memory, "k2") == ["k2 secret tea"]
    assert rows_of(mem0_memory, "k1") == []


def test_unknown_and_malformed_ids_are_simply_not_found(two_keys):
    notes, _, _ = two_keys
    assert notes.get(["not-a-uuid", "00000000-0000-0000-0000-000000000000"]) == []
    assert notes.delete("not-a-uuid") == []


@pytest.mark.parametrize("filters", [
    {"agent_id": "k2"},
    {"user_id": "another-job"},
    {"run_id": "other"},
    {"OR": [{"agent_id": "k2"}, {"kind": "x"}]},
    {"AND": [{"kind": {"in": ["x"]}}, {"NOT": [{"agent_id": "k1"}]}]},
])
def test_filters_can_never_override_or_widen_the_scope(two_keys, recording_memory, filters):
    notes, _, _ = two_keys
    recording_memory.calls.clear()
    with pytest.raises(ValueError, match="cannot be overridden or widened"):
        notes.get(filters=filters)
    with pytest.raises(ValueError, match="cannot be overridden or widened"):
        notes.search("tea", filters=filters)
    assert recording_memory.calls == []


@pytest.mark.parametrize("option", ["agent_id", "user_id", "run_id"])
def test_search_options_can_never_set_the_scope(two_keys, option):
    notes, _, _ = two_keys
    with pytest.raises(ValueError, match="cannot be overridden"):
        notes.search("tea", **{option: "k2"})


@pytest.mark.parametrize("metadata", [{"agent_id": "k2"}, {"user_id": "j"}, {"run_id": "r"},
                                      {"nested": {"agent_id": "k2"}}])
def test_metadata_can_never_set_the_scope(ltm, mem0_memory, metadata):
    ltm.switch_context("k1", "obs-1", False)
    with pytest.raises(ValueError, match="cannot be overridden"):
        ltm.get_memory_set("notes").add("tea", metadata)
    assert rows_of(mem0_memory, "k1") == [] and rows_of(mem0_memory, "k2") == []


def test_caller_filters_narrow_within_the_set(ltm):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    notes.add(["green tea", "black tea", "coffee"],
              [{"kind": "tea"}, {"kind": "tea"}, {"kind": "coffee"}])
    assert sorted(i.value for i in notes.get(filters={"kind": "tea"})) == ["black tea", "green tea"]
    assert [i.value for i in notes.search("drink", filters={"kind": "coffee"})] == ["coffee"]


def test_search_honours_limit(ltm):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    notes.add([f"tea note {n}" for n in range(25)])  # more than Mem0's default top_k of 20
    assert len(notes.search("tea note", limit=3)) == 3
    assert len(notes.search("tea note", limit=25)) == 25
    assert len(notes.search("tea note", limit=40)) == 25
    assert len(notes.get(limit=5)) == 5


def test_each_item_gets_its_own_metadata(ltm):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    ids = notes.add(["first", "second", "third"], [{"n": 1}, {"n": 2}, {"n": 3}])
    by_id = {item.id: item for item in notes.get(ids)}
    assert [(by_id[i].value, by_id[i].metadata) for i in ids] == [
        ("first", {"n": 1}), ("second", {"n": 2}), ("third", {"n": 3})]


def test_one_metadata_dict_applies_to_every_item(ltm):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    ids = notes.add(["first", "second"], {"source": "chat"})
    assert [item.metadata for item in notes.get(ids)] == [{"source": "chat"}] * 2


@pytest.mark.parametrize("key, neighbour", [(" a", "a"), ("a ", "a"), ("a b", "a%20b"),
                                             ("Aa", "BB")])
def test_keys_that_mem0_would_merge_stay_apart(ltm, key, neighbour):
    ltm.switch_context(neighbour, "obs-1", False)
    ltm.get_memory_set("notes").add("the neighbour's item")
    ltm.switch_context(key, "obs-2", False)
    mine = ltm.get_memory_set("notes")
    mine.add("my item")
    assert [item.value for item in mine.get()] == ["my item"]
    assert [item.value for item in mine.search("item")] == ["my item"]


def test_the_key_reaches_mem0_as_its_own_text(ltm, mem0_memory):
    ltm.switch_context(12345, "obs-1", False)  # str(key), never a hash
    ltm.get_memory_set("notes").add("tea")
    [row] = mem0_memory.get_all(filters={"user_id": "test-job", "agent_id": "12345"})["results"]
    assert (row["user_id"], row["agent_id"], row["run_id"]) == ("test-job", "12345", "notes")
