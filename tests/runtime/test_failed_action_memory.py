"""A failed action's memory observations are dropped; what it wrote to Mem0 stays."""

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from runtime.memory_agents import ObservedNotesAgent

pytestmark = pytest.mark.cluster


def test_a_failed_action_raises_no_memory_event_and_other_actions_do(flink_env, tmp_path):
    env = flink_env()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.ERROR_HANDLING, "ignore")
    config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")
    config.set(LongTermMemoryOptions.BASE_DIR, str(tmp_path))
    inputs = [("a", 0, False), ("b", 0, True), ("a", 1, False), ("b", 1, False)]
    stream = env.from_collection(
        inputs, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.BOOLEAN()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(
        ObservedNotesAgent())
    results = list(out.to_datastream().execute_and_collect())

    assert sorted(r for r in results if r[0] == "done") == [
        ("done", "a", 0), ("done", "a", 1), ("done", "b", 1)]
    observed = sorted((key, len(ids)) for kind, key, ids in results if kind == "observed")
    assert observed == [("a", 1), ("a", 1), ("b", 1)]  # b's failed input #0 raised none
