"""An action's short-term memory reads one entry of the key's map state per path it
asks for, not the whole map, and still never leaves an entry behind under a path it
overwrote. Flink's MapState is a dict here that counts its calls (the cluster tests run
the store on real Flink state)."""

from collections import Counter

from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryObject, KeyedMemoryStore
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck


class CountingMapState:
    def __init__(self, values=None):
        self.values = dict(values or {})
        self.calls = Counter()

    def get(self, key):
        self.calls["get"] += 1
        return self.values.get(key)

    def items(self):
        self.calls["items"] += 1
        return list(self.values.items())

    def put(self, key, value):
        self.calls["put"] += 1
        self.values[key] = value

    def remove(self, key):
        self.calls["remove"] += 1
        self.values.pop(key, None)


def memory_over(state, exact_tree=True):
    store = KeyedMemoryStore(state, MailboxThreadCheck(), "short-term memory",
                             exact_tree=exact_tree)
    return store, KeyedMemoryObject(store)


def persisted(values):
    """A map state holding ``values`` as an action would have written them."""
    state = CountingMapState()
    store, memory = memory_over(state)
    for path, value in values.items():
        memory.set(path, value)
    store.persist()
    state.calls.clear()
    return state


def test_a_counter_increment_reads_one_entry_and_writes_one():
    state = persisted({"count": 1, "profile.name": "Ada", "profile.tags": ["a"]})
    store, memory = memory_over(state)
    memory.set("count", memory.get("count") + 1)
    store.persist()
    assert state.calls == Counter(get=1, put=1)
    assert memory_over(state)[1].get("count") == 2


def test_a_path_read_twice_is_read_from_state_once_and_an_absent_one_too():
    state = persisted({"count": 1})
    _, memory = memory_over(state)
    assert (memory.get("count"), memory.get("count")) == (1, 1)
    assert (memory.get("missing"), memory.is_exist("missing")) == (None, False)
    assert state.calls == Counter(get=2)


def test_a_value_set_over_an_object_removes_the_objects_fields():
    state = persisted({"profile.name": "Ada", "profile.address.city": "Paris", "other": 1})
    store, memory = memory_over(state)
    memory.set("profile", "gone")
    store.persist()
    assert sorted(state.values) == ["other", "profile"]
    assert memory_over(state)[1].get_fields() == {"other": 1, "profile": "gone"}


def test_listing_fields_sees_the_actions_own_writes_over_the_state():
    state = persisted({"a": 1, "b": 2})
    _, memory = memory_over(state)
    memory.set("c", 3)
    memory.delete("a")
    assert memory.get_field_names() == ["b", "c"]
    assert state.calls["items"] == 1


def test_with_a_state_ttl_an_expired_object_nodes_fields_are_removed_too():
    """A TTL expires entries one by one: the object node 'profile' may be gone while
    'profile.name' is still there. Setting 'profile' must not leave it behind."""
    state = persisted({"profile.name": "Ada"})
    del state.values["profile"]  # expired before its field
    store, memory = memory_over(state, exact_tree=False)
    memory.set("profile", "value")
    store.persist()
    assert sorted(state.values) == ["profile"]
