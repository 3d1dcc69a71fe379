"""The race over the current key, end to end: worker threads use memory sets while the
operator runs other keys' actions; every item stays on its own key."""

import collections

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from runtime.agents_for_tests import IN_MEMORY_QDRANT, LateNotesAgent, NotesAgent

KEYS = [f"customer-{i}" for i in range(16)]
NOTES_PER_KEY = 4

pytestmark = pytest.mark.cluster


def run_notes_job(flink_env, memory_factory=None, agent=NotesAgent):
    env = flink_env()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")
    config.set(LongTermMemoryOptions.VECTOR_STORE, IN_MEMORY_QDRANT)
    config.set(AgentsOptions.ASYNC_CAPACITY, 16)
    if memory_factory:
        config.set(AgentsOptions.LONG_TERM_MEMORY_FACTORY, memory_factory)
    inputs = [(key, n) for n in range(NOTES_PER_KEY) for key in KEYS]
    stream = env.from_collection(inputs, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(agent())
    return list(out.to_datastream().execute_and_collect())


@pytest.fixture(scope="module")
def scoped_run(flink_env):
    return run_notes_job(flink_env)


@pytest.fixture(scope="module")
def shared_key_run(flink_env):
    return run_notes_job(flink_env, "runtime.agents_for_tests:shared_current_key_memory")


@pytest.fixture(scope="module")
def late_set_run(flink_env):
    return run_notes_job(flink_env, agent=LateNotesAgent)


def foreign_reads(results):
    return [(key, note) for kind, key, _, seen in (r for r in results if r[0] == "read")
            for note in seen if not note.endswith(f" of {key}")]


def test_items_written_and_read_on_a_worker_thread_stay_on_their_own_key(scoped_run):
    reads = [r for r in scoped_run if r[0] == "read"]
    assert len(reads) == len(KEYS) * NOTES_PER_KEY
    assert foreign_reads(scoped_run) == []
    last_read = {key: seen for _, key, n, seen in reads if n == NOTES_PER_KEY - 1}
    for key in KEYS:
        assert last_read[key] == sorted(f"note {n} of {key}" for n in range(NOTES_PER_KEY))


def test_the_same_job_mixes_keys_when_operations_read_the_shared_current_key(shared_key_run):
    assert foreign_reads(shared_key_run), "the broken variant should have crossed keys"


def test_each_write_raises_one_memory_event_for_its_own_key_and_no_cascade(scoped_run):
    observed = [r for r in scoped_run if r[0] == "observed"]
    assert collections.Counter((key, op) for _, key, _, op in observed) == {
        (key, "add"): NOTES_PER_KEY for key in KEYS}
    assert all(owner == key for _, key, owner, _ in observed)


def test_a_set_obtained_after_an_await_is_bound_to_the_key_of_its_action(late_set_run):
    reads = [r for r in late_set_run if r[0] == "read"]
    assert len(reads) == len(KEYS) * NOTES_PER_KEY
    assert foreign_reads(late_set_run) == []
