"""The update part of the long-term-memory contract: ``MemorySet.update(item_id, value,
metadata=None)`` rewrites one item of the set in place, re-embedded, with add's checks,
confined to the set (never an item of another key, set or job), replay-stable and
observed. The core call under test is ``_update``."""

from __future__ import annotations

import math

import pytest

from flink_agents_ltm.api.events import MemoryUpdateEvent, memory_event_for
from flink_agents_ltm.api.memory import EmptyPartitionKeyError, MemorySet, UnboundMemorySetError
from flink_agents_ltm.testing.conformance.core import UUID, bound, to_python_memory_set

# ------------------------------------------------------------------ in place


def test_an_update_rewrites_the_item_in_place_and_search_finds_the_new_text(impl):
    notes = bound(impl.ltm, "alice")
    [tea, dog] = notes.add(["alice drinks green tea every morning", "alice walks her dog"])
    [before] = notes.get(tea)
    new_text = "alice switched to strong espresso coffee"

    assert notes.update(tea, new_text) is True

    [after] = notes.get(tea)
    assert (after.id, after.value, after.created_at) == (tea, new_text, before.created_at)
    assert after.updated_at >= before.updated_at
    assert impl.raw_values("alice", "notes") == sorted([new_text, "alice walks her dog"])
    # Re-embedded: the item scores for its new text as an item stored with that text does.
    bound(impl.ltm, "alice", "control").add(new_text)
    [reference] = bound(impl.ltm, "alice", "control").search(new_text, limit=1)
    hits = notes.search(new_text, limit=2)
    assert hits[0].id == tea
    assert math.isclose(hits[0].score, reference.score, rel_tol=1e-4), (hits, reference)
    assert all(h.value != "alice drinks green tea every morning"
               for h in notes.search("green tea every morning", limit=10))
    assert dog in [h.id for h in hits]


def test_an_id_outside_the_set_is_not_found_by_update_and_its_row_is_untouched(impl):
    [bobs] = bound(impl.ltm, "bob").add("bob's secret")
    [other_set] = bound(impl.ltm, "alice", "other").add("alice elsewhere")
    notes = bound(impl.ltm, "alice", observation_id="obs")
    notes.add("alice's note")

    for foreign in (bobs, other_set, UUID, "not-a-uuid"):
        assert notes.update(foreign, "overwritten") is False, foreign
    assert impl.raw_values("bob", "notes") == ["bob's secret"]
    assert impl.raw_values("alice", "other") == ["alice elsewhere"]
    assert impl.raw_values("alice", "notes") == ["alice's note"]
    assert [o.op.value for o in impl.ltm.end_action("obs", True).observations] == ["add"]


def test_an_id_of_another_job_on_the_same_store_is_not_found_by_update(impl):
    other_job = impl.another_job()
    [other_jobs] = bound(other_job, "alice").add("another job's note")
    notes = bound(impl.ltm, "alice", observation_id="obs")
    notes.add("alice's note")

    assert notes.update(other_jobs, "overwritten") is False
    assert impl.raw_values("alice", "notes") == ["alice's note"]
    assert [i.value for i in bound(other_job, "alice").get()] == ["another job's note"]
    assert [o.op.value for o in impl.ltm.end_action("obs", True).observations] == ["add"]


# ------------------------------------------------------------------ one validation


@pytest.mark.parametrize("args, error, problem", [
    ((UUID, b"bytes"), TypeError, "str values only; update\\(\\) got bytes"),
    ((UUID, ["a", "b"]), TypeError, "str values only; update\\(\\) got list"),
    ((UUID, 7), TypeError, "str values only; update\\(\\) got int"),
    ((UUID, "  "), ValueError, "empty value"),
    ((UUID, "bad\x00"), ValueError, "NUL"),
    ((UUID, "x" * 32_769), ValueError, "32769 characters, more than the 32768 allowed "
                                        "\\(long-term-memory.max-item-length\\)"),
    ((UUID, "fine", {"agent_id": "bob"}), ValueError, "cannot be overridden"),
    ((UUID, "fine", {"hash": "x"}), ValueError, "hash"),
    ((UUID, "fine", {"when": object()}), TypeError, "when"),
    ((UUID, "fine", ["not", "a", "dict"]), TypeError, "metadata"),
    (([UUID], "fine"), TypeError, "one item id \\(a str\\), got list"),
], ids=["bytes", "list", "int", "blank", "nul", "too long", "scope field", "reserved key",
        "not json", "metadata not a dict", "list of ids"])
def test_bad_input_to_update_is_refused_naming_the_problem_before_the_store(
        impl, args, error, problem):
    notes = bound(impl.ltm, "alice")
    impl.record_core_calls()
    with pytest.raises(error, match=problem):
        notes.update(*args)
    assert impl.core_calls == []


def test_update_with_an_unbound_or_empty_key_is_refused_before_the_store(impl):
    impl.record_core_calls()
    with pytest.raises(UnboundMemorySetError, match="no partition key is bound"):
        MemorySet(name="notes", ltm=impl.ltm).update(UUID, "tea")
    with pytest.raises(EmptyPartitionKeyError, match="empty or whitespace-only"):
        to_python_memory_set("notes", " ", "obs", ltm=impl.ltm).update(UUID, "tea")
    assert impl.core_calls == []


def test_metadata_none_keeps_the_items_metadata_and_a_dict_replaces_it_whole(impl):
    notes = bound(impl.ltm, "alice")
    [item] = notes.add("draft", {"kind": "note", "stars": 3})

    notes.update(item, "second draft")
    assert dict(notes.get(item)[0].metadata) == {"kind": "note", "stars": 3}
    notes.update(item, "final", {"kind": "fact"})
    [stored] = notes.get(item)
    assert (stored.value, dict(stored.metadata)) == ("final", {"kind": "fact"})
    assert [i.id for i in notes.get(filters={"kind": "fact"})] == [item]
    assert notes.get(filters={"stars": 3}) == []
    notes.update(item, "final", {})
    assert dict(notes.get(item)[0].metadata) == {}


# ------------------------------------------------------------------ replay and observations


def test_a_replayed_action_that_adds_and_updates_leaves_one_row_with_the_updated_value(impl):
    notes = bound(impl.ltm, "alice", observation_id="alice#3#0")
    [item] = notes.add("draft")
    notes.update(item, "final", {"v": 2})
    impl.ltm.end_action("alice#3#0", completed=False)  # the action failed: Flink replays it

    replayed_ltm = impl.reopen() if impl.reopen else impl.ltm
    again = bound(replayed_ltm, "alice", observation_id="alice#3#0")
    assert again.add("draft") == [item]
    assert again.update(item, "final", {"v": 2}) is True
    assert again.update(item, "final", {"v": 2}) is True  # and once more: the same row
    assert impl.raw_values("alice", "notes") == ["final"]
    [stored] = again.get()
    assert (stored.id, stored.value, dict(stored.metadata)) == (item, "final", {"v": 2})


def test_an_update_is_observed_and_becomes_a_memory_update_event(impl):
    notes = bound(impl.ltm, "alice", observation_id="obs")
    [item] = notes.add("green tea")
    notes.update(item, "black tea")
    observations = impl.ltm.end_action("obs", True).observations
    assert [(o.op.value, o.ids, o.query) for o in observations] == [
        ("add", (item,), None), ("update", (item,), None)]
    assert type(memory_event_for(observations[1])) is MemoryUpdateEvent
    assert observations[1].to_dict()["op"] == "update"

    quiet = bound(impl.ltm, "alice", observation_id="quiet", suppressed=True)
    assert quiet.update(item, "oolong") is True
    assert impl.ltm.end_action("quiet", True).observations == ()


def test_an_update_stores_no_new_item_so_the_action_reports_none_added(impl):
    [item] = bound(impl.ltm, "alice").add("green tea")
    bound(impl.ltm, "alice", observation_id="obs").update(item, "black tea")
    assert impl.ltm.end_action("obs", True).items_added == 0


__all__ = sorted(name for name in dict(globals()) if name.startswith("test_"))
