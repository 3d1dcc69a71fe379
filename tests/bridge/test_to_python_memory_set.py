"""`to_python_memory_set`: how Java's MemorySet is rebuilt in Python, binding included."""

import pickle

import pytest

from flink_agents_ltm.api.memory.long_term_memory import (
    EmptyPartitionKeyError,
    MemorySet,
    UnboundMemorySetError,
)
from flink_agents_ltm.bridge import to_python_memory_set
from tests.memory.conftest import rows_of


def test_to_python_memory_set_carries_the_action_context(ltm):
    memory_set = to_python_memory_set("notes", "alice", "obs-7", True, ltm=ltm)

    assert isinstance(memory_set, MemorySet)
    assert memory_set.name == "notes"
    assert memory_set.partition_key == "alice"
    assert memory_set.observation_id == "obs-7"
    assert memory_set.observation_suppressed is True
    assert memory_set.ltm is ltm
    # Only the name survives serialization, like any other set.
    assert pickle.loads(pickle.dumps(memory_set)).partition_key is None


def test_the_rebuilt_set_operates_on_its_own_key_and_observation(ltm, recording_memory):
    ltm.switch_context("bob", "obs-bob", False)  # the key in scope is not the set's
    memory_set = to_python_memory_set("notes", "alice", "obs-alice", False, ltm=ltm)

    memory_set.add("alice drinks tea")

    assert rows_of(recording_memory, "alice") == ["alice drinks tea"]
    assert rows_of(recording_memory, "bob") == []
    assert [o.key for o in ltm.end_action("obs-alice", completed=True).observations] == ["alice"]
    assert ltm.end_action("obs-bob", completed=True).observations == ()


def test_a_suppressed_rebuilt_set_records_no_observation(ltm):
    to_python_memory_set("notes", "alice", "obs-quiet", True, ltm=ltm).add("quiet")
    to_python_memory_set("notes", "alice", "obs-loud", False, ltm=ltm).add("loud")

    assert ltm.end_action("obs-quiet", completed=True).observations == ()
    assert [o.op.value for o in ltm.end_action("obs-loud", completed=True).observations] == [
        "add"]


def test_to_python_memory_set_refuses_a_missing_key():
    with pytest.raises(TypeError, match="partition_key"):
        to_python_memory_set("notes")  # type: ignore[call-arg]


def test_a_null_key_from_java_stays_unbound_and_is_refused_before_mem0(ltm, recording_memory):
    memory_set = to_python_memory_set("notes", None, "obs", False, ltm=ltm)

    assert memory_set.partition_key is None
    with pytest.raises(UnboundMemorySetError):
        memory_set.add("never stored")
    assert recording_memory.calls == []


def test_an_empty_key_from_java_is_refused_before_mem0(ltm, recording_memory):
    memory_set = to_python_memory_set("notes", "", "obs", False, ltm=ltm)

    assert memory_set.partition_key == ""
    with pytest.raises(EmptyPartitionKeyError):
        memory_set.search("anything")
    assert recording_memory.calls == []
