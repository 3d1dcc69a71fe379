"""Bad input gets a clear error naming the problem, and nothing stored is lost or leaks."""

import pytest

from flink_agents_ltm.api.memory import LongTermMemoryError
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from tests.memory.conftest import rows_of, unwrapped


@pytest.fixture
def notes(ltm):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    notes.add("already stored")
    return notes


@pytest.mark.parametrize("items, named", [
    (42, "int"), (b"bytes", "bytes"), ({"a": 1}, "dict"), (["ok", 7], "item 1 is int"),
    (["ok", None], "item 1 is NoneType"), ([{"role": "user"}], "item 0 is dict"),
])
def test_non_str_values_are_refused_with_their_type_and_nothing_is_stored(
        notes, mem0_memory, items, named):
    with pytest.raises(TypeError, match=named):
        notes.add(items)
    assert rows_of(mem0_memory, "k1") == ["already stored"]


def test_a_metadata_list_of_the_wrong_length_is_refused_and_nothing_is_stored(notes, mem0_memory):
    with pytest.raises(ValueError, match="got 1 metadata dicts for 2 items"):
        notes.add(["a", "b"], [{"n": 1}])
    assert rows_of(mem0_memory, "k1") == ["already stored"]


def test_metadata_that_would_overwrite_mem0_fields_is_refused(notes, mem0_memory):
    with pytest.raises(ValueError, match="'data'"):
        notes.add("a", {"data": "replaced text"})
    assert rows_of(mem0_memory, "k1") == ["already stored"]


def test_a_huge_value_is_refused_before_any_item_of_the_batch_is_stored(notes, mem0_memory):
    with pytest.raises(ValueError, match="item 1 has 40000 characters"):
        notes.add(["fine", "x" * 40_000])
    assert rows_of(mem0_memory, "k1") == ["already stored"]


def test_empty_items_and_queries_are_refused(notes):
    with pytest.raises(ValueError, match="item 0 is empty"):
        notes.add("  ")
    with pytest.raises(ValueError, match="query is empty"):
        notes.search(" ")
    with pytest.raises(TypeError, match="query must be a str"):
        notes.search(3)


@pytest.mark.parametrize("limit", [0, -1, 2.5, True, "3"])
def test_a_limit_that_is_not_a_positive_int_is_refused(notes, limit):
    with pytest.raises(ValueError, match="limit must be a positive int"):
        notes.search("tea", limit=limit)


def test_unknown_search_options_are_refused_instead_of_silently_ignored(notes):
    with pytest.raises(TypeError, match=r"unknown search option\(s\) \['top_k'\]"):
        notes.search("tea", top_k=3)


def test_ids_and_filters_together_are_refused(notes):
    with pytest.raises(ValueError, match="ids or filters"):
        notes.get(["x"], filters={"kind": "tea"})


def test_a_store_failure_during_a_batched_add_stores_none_of_it_and_says_so(
        ltm, mem0_memory, monkeypatch):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    [stored_id] = notes.add("already stored")

    def failing_insert(*args, **kwargs):
        raise ConnectionError("vector store went away")

    monkeypatch.setattr(unwrapped(mem0_memory), "insert", failing_insert)
    with pytest.raises(LongTermMemoryError, match="none of its 3 items is stored") as error:
        notes.add(["one", "two", "three"])
    assert "vector store went away" in str(error.value)
    assert "memory set 'notes' of key 'k1'" in str(error.value)
    assert rows_of(mem0_memory, "k1") == ["already stored"]
    assert [o.ids for o in ltm.end_action("obs-1", completed=True).observations] == [
        (stored_id,)]


def test_unknown_configuration_keys_are_refused_with_the_known_ones():
    with pytest.raises(KeyError, match="unknown configuration key 'long-term-memory.vectorstore'"):
        Mem0LongTermMemory.from_config("job", {"long-term-memory.vectorstore": {}})


def test_a_configuration_value_of_the_wrong_type_is_refused():
    with pytest.raises(TypeError, match="expects int, got str"):
        Mem0LongTermMemory.from_config("job", {"long-term-memory.max-item-length": "big"})


def test_a_named_resource_without_resources_to_resolve_it_is_refused(tmp_path):
    with pytest.raises(ValueError, match="names the chat_model 'my_llm'"):
        Mem0LongTermMemory.from_config("job", {"long-term-memory.chat-model-setup": "my_llm",
                                               "long-term-memory.embedded.base-dir": str(tmp_path)})


@pytest.mark.parametrize("job_id", ["", "  ", None])
def test_a_missing_job_id_is_refused(recording_memory, job_id):
    with pytest.raises(ValueError, match="job_id"):
        Mem0LongTermMemory(job_id=job_id, memory=recording_memory)


def test_a_set_name_that_is_empty_is_refused(ltm):
    ltm.switch_context("k1", "obs-1", False)
    with pytest.raises(ValueError, match="memory set name must not be empty"):
        ltm.get_memory_set(" ")
