"""The memory scope of a chat call: reads through to the caller's memory,
keeps every write local, and never flushes or changes the caller.

The caller's store is the real ``KeyedMemoryStore``; only Flink's MapState under it
is a dict here (the cluster tests run it on real Flink state)."""

import threading

import pytest

from flink_agents_ltm.api.memory.long_term_memory import MailboxThreadError
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryObject, KeyedMemoryStore
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.read_through_memory import ReadThroughMemoryStore


class DictMapState:
    """Flink MapState's four calls the store uses, over a dict."""

    def __init__(self, values=None):
        self.values = dict(values or {})

    def get(self, key):
        return self.values.get(key)

    def items(self):
        return list(self.values.items())

    def put(self, key, value):
        self.values[key] = value

    def remove(self, key):
        self.values.pop(key, None)


@pytest.fixture
def caller():
    """The caller's short-term memory: 'count' persisted, 'draft' written but pending."""
    state = DictMapState()
    store = KeyedMemoryStore(state, MailboxThreadCheck(), "short-term memory")
    memory = KeyedMemoryObject(store)
    memory.set("count", 1)
    memory.set("profile.tags", ["a", {"nested": [1]}])
    memory.set("blob", bytearray(b"xy"))
    store.persist()
    memory.set("count", 2)  # the caller's pending write
    memory.set("draft", "unsent")
    return state, store, memory


def scope_over(store):
    child = ReadThroughMemoryStore(store)
    return child, KeyedMemoryObject(child)


def test_reads_persisted_and_uncommitted_values_without_flushing_or_changing_the_parent(caller):
    state, store, memory = caller
    before = dict(state.values)
    _, view = scope_over(store)
    assert view.get("count") == 2 and view.get("draft") == "unsent"
    assert view.get("profile.tags") == ["a", {"nested": [1]}]
    assert sorted(view.get_field_names()) == ["blob", "count", "draft", "profile"]
    assert state.values == before  # nothing flushed
    assert memory.get("count") == 2  # the caller's pending write is still its own


def test_writes_and_mutations_of_copied_values_do_not_reach_the_parent(caller):
    state, store, memory = caller
    _, view = scope_over(store)
    tags = view.get("profile.tags")
    tags[1]["nested"].append(2)
    tags.append("b")
    blob = view.get("blob")
    blob[0:1] = b"Z"
    view.set("profile.tags", tags)
    view.set("blob", blob)
    view.set("count", 99)
    view.set("new.field", "only here")
    view.delete("draft")
    assert view.get("profile.tags") == ["a", {"nested": [1, 2]}, "b"]
    assert view.get("blob") == bytearray(b"Zy") and view.get("draft") is None
    assert memory.get("profile.tags") == ["a", {"nested": [1]}]
    assert memory.get("blob") == bytearray(b"xy")
    assert (memory.get("count"), memory.get("draft"), memory.is_exist("new")) == (2, "unsent",
                                                                                  False)
    store.persist()  # the caller completes: only its own writes become durable
    assert "new" not in state.values and "new.field" not in state.values


def test_first_read_copies_so_later_parent_changes_are_not_seen(caller):
    _, store, memory = caller
    _, view = scope_over(store)
    assert view.get("count") == 2
    memory.set("count", 3)
    assert view.get("count") == 2


def test_clear_hides_the_parent_and_keeps_later_local_writes(caller):
    _, store, memory = caller
    child, view = scope_over(store)
    view.set("before", 1)
    child.clear()
    assert view.get_field_names() == [] and view.get("count") is None
    view.set("after", "kept")
    assert view.get_fields() == {"after": "kept"}
    assert memory.get("count") == 2 and not memory.is_exist("after")


def test_separate_scopes_do_not_see_each_other_s_writes(caller):
    _, store, _ = caller
    _, first = scope_over(store)
    _, second = scope_over(store)
    first.set("count", 10)
    first.set("mine", "first")
    assert second.get("count") == 2 and second.get("mine") is None


def test_a_failing_parent_read_propagates_with_no_fallback_to_sharing(caller):
    _, store, _ = caller
    _, view = scope_over(store)  # built on the mailbox (this) thread
    errors = []

    def worker():
        try:
            view.get("count")
        except Exception as error:  # noqa: BLE001 - handed to the test
            errors.append(error)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    [error] = errors
    assert isinstance(error, MailboxThreadError)
    assert "must run on the operator's mailbox thread" in str(error)


def test_a_value_that_cannot_be_copied_fails_the_read(caller):
    _, store, _ = caller
    store.put("lock", threading.Lock())  # a live object pending in the caller's cache
    child = ReadThroughMemoryStore(store)
    for _ in range(2):  # nothing half-copied is kept: the second read fails too
        with pytest.raises(TypeError, match="lock"):
            child.entries()["lock"]
