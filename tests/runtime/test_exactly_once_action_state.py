"""The action-state store on PyFlink's mini-cluster: the job fails once (as in
``test_exactly_once``) and Flink replays every input since the restored checkpoint.

Without the store, the calls that completed after that checkpoint run again. With
``agents.action-state.store=sqlite`` their results, written ahead, answer the replay,
and a call the failure interrupted asks its reconciler: every call runs exactly once."""

import collections
import os
import stat

import pytest

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.runtime.action_state.sqlite import FILE_NAME
from runtime.action_state_agents import ReconcilingCountingAgent
from runtime.flink_options import checkpointing, inputs_with_a_trigger

KEYS = 6
INPUTS = 600
TRIGGER = (3, 99)
JOB = "exactly-once-action-state"

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module", params=["none", "sqlite"])
def recovered_run(request, flink_env, tmp_path_factory):
    store = request.param
    work_dir = str(tmp_path_factory.mktemp(f"action-state-{store}"))
    env = flink_env(**checkpointing(work_dir))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.JOB_ID, JOB)
    config.set(AgentsOptions.ACTION_STATE_STORE, store)
    config.set(LongTermMemoryOptions.BASE_DIR, work_dir)

    stream = inputs_with_a_trigger(env, work_dir, KEYS, INPUTS, TRIGGER)
    out = (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
           .apply(ReconcilingCountingAgent()).to_datastream())
    results = list(out.execute_and_collect())
    with open(os.path.join(work_dir, "calls.log")) as log:
        calls = collections.Counter(tuple(map(int, line.split())) for line in log)
    return store, work_dir, results, calls


def test_the_job_failed_once_and_every_input_has_one_output(recovered_run):
    _, work_dir, results, _ = recovered_run
    assert os.path.exists(os.path.join(work_dir, "failed-once"))
    assert sorted(n for _, n, _ in results) == list(range(INPUTS))


def test_with_the_store_every_call_ran_exactly_once_and_without_it_some_ran_again(
        recovered_run):
    store, _, _, calls = recovered_run
    assert set(calls) == {(n % KEYS, n) for n in range(INPUTS)}
    ran_again = sorted(call for call, times in calls.items() if times > 1)
    if store == "sqlite":
        assert ran_again == []
    else:  # the calls completed between the restored checkpoint and the failure
        assert ran_again != []


def test_the_store_file_is_private_and_only_there_when_asked_for(recovered_run):
    store, work_dir, _, _ = recovered_run
    path = os.path.join(work_dir, JOB, FILE_NAME)
    if store == "none":
        assert not os.path.exists(path)
    else:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
