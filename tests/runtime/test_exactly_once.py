"""Exactly-once across a failure: short-term counters and recorded durable calls.

The job fails once, inside an action whose first durable call was recorded
before a checkpoint that completed later (gated on ``chk-N/_metadata`` on disk;
unaligned checkpoints keep them frequent under back-pressure)."""

import collections
import os

import pytest

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from runtime.agents_for_tests import CountingAgent
from runtime.flink_options import checkpointing, inputs_with_a_trigger

KEYS = 6
INPUTS = 600
TRIGGER = (3, 99)  # (key, n): fails once, after a later checkpoint completed

# flink_smoke: also run on every supported Flink version (make test-flink).
pytestmark = [pytest.mark.cluster, pytest.mark.flink_smoke]


@pytest.fixture(scope="module", params=["hashmap", "rocksdb"])
def recovered_run(request, flink_env, tmp_path_factory):
    backend = request.param
    work_dir = str(tmp_path_factory.mktemp(f"exactly-once-{backend}"))
    env = flink_env(**checkpointing(work_dir, **{"state.backend.type": backend}))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)

    stream = inputs_with_a_trigger(env, work_dir, KEYS, INPUTS, TRIGGER)
    out = (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
           .apply(CountingAgent()).to_datastream())
    results = list(out.execute_and_collect())
    with open(os.path.join(work_dir, "calls.log")) as log:
        calls = collections.Counter(tuple(map(int, line.split())) for line in log)
    return backend, work_dir, results, calls


def test_the_job_failed_once_and_recovered(recovered_run):
    _, work_dir, results, _ = recovered_run
    assert os.path.exists(os.path.join(work_dir, "failed-once"))
    assert len(results) == INPUTS


def test_each_key_counter_is_incremented_exactly_once_per_input(recovered_run):
    _, _, results, _ = recovered_run
    counts = collections.defaultdict(list)
    for key, n, count in results:
        counts[key].append((n, count))
    for key in range(KEYS):
        ns = sorted(counts[key])
        assert [count for _, count in ns] == list(range(1, INPUTS // KEYS + 1)), key


def test_a_durable_call_recorded_before_the_checkpoint_is_not_run_again(recovered_run):
    _, _, _, calls = recovered_run
    assert calls[TRIGGER] == 1
    assert set(calls) == {(n % KEYS, n) for n in range(INPUTS)}
