"""A memory set keeps the context of the action that obtained it."""

import json
import pickle

import pytest

from flink_agents_ltm.api.memory import MailboxThreadError, MemoryOp, MemorySet
from tests.memory.conftest import rows_of, run_on_worker


def test_memory_set_stays_on_its_own_key_after_the_owner_switches(ltm, mem0_memory):
    ltm.switch_context("k2", "obs-k2", False)
    other = ltm.get_memory_set("notes")
    other.add("k2 keeps its tea")
    ltm.switch_context("k1", "obs-k1", False)
    notes = ltm.get_memory_set("notes")
    ltm.switch_context("k2", "obs-k2b", False)  # the mailbox moved on before the work ran

    ids = run_on_worker(lambda: notes.add(["k1 likes tea", "k1 owns a dog"]))
    assert rows_of(mem0_memory, "k1") == ["k1 likes tea", "k1 owns a dog"]
    assert rows_of(mem0_memory, "k2") == ["k2 keeps its tea"]

    got = run_on_worker(lambda: notes.get())
    assert sorted(item.value for item in got) == ["k1 likes tea", "k1 owns a dog"]
    found = run_on_worker(lambda: notes.search("tea", limit=5))
    assert [item.value for item in found] == ["k1 likes tea", "k1 owns a dog"][: len(found)]
    assert {item.value for item in found} <= {"k1 likes tea", "k1 owns a dog"}

    deleted = run_on_worker(lambda: notes.delete())
    assert sorted(deleted) == sorted(ids)
    assert rows_of(mem0_memory, "k1") == []
    assert rows_of(mem0_memory, "k2") == ["k2 keeps its tea"]


def test_observations_stay_with_the_action_that_obtained_the_set(ltm):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")
    ltm.switch_context("k2", "obs-2", False)

    [item_id] = notes.add("tea")
    notes.get([item_id])
    notes.search("tea", limit=1)
    notes.delete([item_id])

    observed = ltm.end_action("obs-1", completed=True).observations
    assert [(o.op, o.key, o.set, o.ids) for o in observed] == [
        (MemoryOp.ADD, "k1", "notes", (item_id,)),
        (MemoryOp.GET, "k1", "notes", (item_id,)),
        (MemoryOp.SEARCH, "k1", "notes", (item_id,)),
        (MemoryOp.DELETE, "k1", "notes", (item_id,)),
    ]
    assert observed[2].query == "tea"
    assert ltm.end_action("obs-2", completed=True).observations == ()
    assert ltm.end_action("obs-1", completed=True).observations == ()  # handed over once


@pytest.mark.parametrize("set_suppressed, current_suppressed", [(True, False), (False, True)])
def test_suppression_follows_the_set_not_the_current_context(
        ltm, set_suppressed, current_suppressed):
    ltm.switch_context("k1", "obs-1", set_suppressed)
    notes = ltm.get_memory_set("notes")
    ltm.switch_context("k1", "obs-2", current_suppressed)

    notes.add("tea")
    notes.search("tea")

    observed = ltm.end_action("obs-1", completed=True).observations
    assert len(observed) == (0 if set_suppressed else 2)


def test_set_scoped_operations_run_without_the_mailbox_thread(ltm):
    ltm.switch_context("k1", "obs-1", False)
    notes = ltm.get_memory_set("notes")

    [item_id] = run_on_worker(lambda: notes.add("tea"))
    assert [i.id for i in run_on_worker(lambda: notes.get())] == [item_id]
    assert [i.id for i in run_on_worker(lambda: notes.search("tea"))] == [item_id]
    assert run_on_worker(lambda: notes.delete([item_id])) == [item_id]


def test_memory_set_management_is_refused_off_the_mailbox_thread(ltm, recording_memory):
    ltm.switch_context("k1", "obs-1", False)
    with pytest.raises(MailboxThreadError, match="mailbox thread"):
        run_on_worker(lambda: ltm.get_memory_set("notes"))
    with pytest.raises(MailboxThreadError, match="mailbox thread"):
        run_on_worker(lambda: ltm.delete_memory_set("notes"))
    assert recording_memory.calls == []


def test_the_thread_check_comes_before_the_key_check(ltm):
    ltm.switch_context("", "obs-1", False)
    with pytest.raises(MailboxThreadError):
        run_on_worker(lambda: ltm.get_memory_set("notes"))
    with pytest.raises(MailboxThreadError):
        run_on_worker(lambda: ltm.delete_memory_set("notes"))


def test_delete_memory_set_deletes_only_the_current_keys_set(ltm, mem0_memory):
    for key in ("k1", "k2"):
        ltm.switch_context(key, f"obs-{key}", False)
        ltm.get_memory_set("notes").add(f"{key} item")
        ltm.get_memory_set("other").add(f"{key} other item")
    ltm.switch_context("k1", "obs-3", False)

    assert ltm.delete_memory_set("notes") is True
    assert ltm.delete_memory_set("notes") is False
    assert rows_of(mem0_memory, "k1") == []
    assert rows_of(mem0_memory, "k2") == ["k2 item"]
    assert rows_of(mem0_memory, "k1", "other") == ["k1 other item"]
    # the empty second delete changed nothing
    [observed] = ltm.end_action("obs-3", completed=True).observations
    assert (observed.op, observed.key, observed.set, len(observed.ids)) == (
        MemoryOp.DELETE, "k1", "notes", 1)


def test_binding_fields_are_excluded_from_serialization(ltm):
    ltm.switch_context("k1", "obs-1", True)
    notes = ltm.get_memory_set("notes")

    assert notes.model_dump() == {"name": "notes"}
    assert json.loads(notes.model_dump_json()) == {"name": "notes"}
    restored = pickle.loads(pickle.dumps(notes))
    assert restored.name == "notes"
    assert (restored.partition_key, restored.observation_id, restored.ltm) == (None, None, None)
    assert restored.observation_suppressed is False
    assert MemorySet.model_validate_json(notes.model_dump_json()).partition_key is None
