"""Short-term memory in keyed state: nested paths, typed values, and the TTL option."""

import datetime

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from runtime.memory_agents import Address, RememberingAgent

# flink_smoke: also run on every supported Flink version (make test-flink).
pytestmark = [pytest.mark.cluster, pytest.mark.flink_smoke]


def run_two_visits(flink_env, pause_s, ttl_ms=None):
    env = flink_env()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    if ttl_ms is not None:
        agents_env.get_config().set(AgentsOptions.SHORT_TERM_MEMORY_TTL_MS, ttl_ms)
    inputs = [("k", 0, 0.0), ("k", 1, pause_s)]
    stream = env.from_collection(
        inputs, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.FLOAT()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(RememberingAgent())
    return dict(out.to_datastream().execute_and_collect())


def test_nested_paths_keep_typed_values_for_the_next_input_of_the_key(flink_env):
    seen = run_two_visits(flink_env, pause_s=0.0)
    assert seen[0] is None
    assert seen[1] == {
        "visits": 0,
        "address": Address("Harbour Street 12", "Kiel"),
        "last_seen": datetime.date(2026, 11, 1),
        "tags": {"favourite": ["green tea", b"\x00bytes"]},
    }


def test_short_term_memory_expires_after_its_ttl(flink_env):
    seen = run_two_visits(flink_env, pause_s=1.5, ttl_ms=300)
    assert seen == {0: None, 1: None}


def test_short_term_memory_within_its_ttl_is_kept(flink_env):
    seen = run_two_visits(flink_env, pause_s=0.0, ttl_ms=60_000)
    assert seen[1]["visits"] == 0
