"""Unbound and empty keys are refused before anything reaches Mem0, each with its own message."""

import pytest

from flink_agents_ltm.api.memory import EmptyPartitionKeyError, MemorySet, UnboundMemorySetError
from flink_agents_ltm.bridge import to_python_memory_set

SET_OPERATIONS = {
    "add": lambda s: s.add("tea"),
    "get": lambda s: s.get(),
    "get by id": lambda s: s.get(["6b89d538-7623-4cc9-a347-8295408dd349"]),
    "search": lambda s: s.search("tea"),
    "delete": lambda s: s.delete(),
    "delete by id": lambda s: s.delete(["6b89d538-7623-4cc9-a347-8295408dd349"]),
}


@pytest.mark.parametrize("operation", SET_OPERATIONS)
def test_unbound_memory_set_is_refused_rather_than_widened(ltm, recording_memory, operation):
    unbound = MemorySet(name="notes", ltm=ltm)
    with pytest.raises(UnboundMemorySetError, match="no partition key is bound"):
        SET_OPERATIONS[operation](unbound)
    assert recording_memory.calls == []


@pytest.mark.parametrize("key", ["", " ", "\t\n"])
@pytest.mark.parametrize("operation", SET_OPERATIONS)
def test_empty_partition_key_is_refused_by_set_operations(ltm, recording_memory, operation, key):
    empty = to_python_memory_set("notes", key, "obs-1", False, ltm=ltm)
    with pytest.raises(EmptyPartitionKeyError, match="empty or whitespace-only"):
        SET_OPERATIONS[operation](empty)
    assert recording_memory.calls == []


@pytest.mark.parametrize("key", ["", "   "])
def test_empty_partition_key_is_refused_by_memory_set_management(ltm, recording_memory, key):
    ltm.switch_context(key, "obs-1", False)  # switching itself never validates
    with pytest.raises(EmptyPartitionKeyError):
        ltm.get_memory_set("notes")
    with pytest.raises(EmptyPartitionKeyError):
        ltm.delete_memory_set("notes")
    assert recording_memory.calls == []


def test_memory_set_management_before_any_context_switch_is_refused(ltm, recording_memory):
    with pytest.raises(UnboundMemorySetError):
        ltm.get_memory_set("notes")
    with pytest.raises(UnboundMemorySetError):
        ltm.delete_memory_set("notes")
    assert recording_memory.calls == []


def test_a_set_restored_from_bytes_is_unbound_and_refused(ltm, recording_memory):
    import pickle

    ltm.switch_context("k1", "obs-1", False)
    restored = pickle.loads(pickle.dumps(ltm.get_memory_set("notes")))
    with pytest.raises(UnboundMemorySetError):
        restored.add("tea")
    assert recording_memory.calls == []


def test_unbound_and_empty_keys_get_different_messages_that_name_their_remedy(ltm):
    with pytest.raises(UnboundMemorySetError) as unbound:
        MemorySet(name="notes", ltm=ltm).add("tea")
    with pytest.raises(EmptyPartitionKeyError) as empty:
        to_python_memory_set("notes", "", ltm=ltm).add("tea")
    assert str(unbound.value) != str(empty.value)
    assert "get_memory_set" in str(unbound.value)
    assert "key selector" in str(empty.value)
    assert isinstance(unbound.value, ValueError) and isinstance(empty.value, ValueError)
