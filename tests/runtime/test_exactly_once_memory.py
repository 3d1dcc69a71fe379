"""Exactly-once long-term memory across a failure on the mini-cluster, with the embedded
store: every input adds one item in a durable call; the job fails once and Flink replays
every input since the restored checkpoint, re-running their calls. The replayed adds
rewrite their rows (replay-stable ids), so the store holds exactly one row per input.

The failing input is the first input of a key with one more input, which arrives only
after the recovery: at the restored checkpoint that key's first memory-writing input is
mid-action, its add recorded (the replay does not run it again). The key must still
know it stored an item, or its next input gets the same item id and overwrites the row
(issue 19)."""

import collections
import os

import pytest

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from runtime.agents_for_tests import RememberingAgent
from runtime.flink_options import checkpointing, inputs_with_a_lone_key

KEYS = 36
INPUTS = 720
LONE_INPUTS = (10, INPUTS - 1)  # key KEYS's only inputs; the first fails once, mid-action
JOB = "exactly-once-memory"


def key_of(n):
    return KEYS if n in LONE_INPUTS else n % KEYS

# flink_smoke: also run on every supported Flink version (make test-flink).
pytestmark = [pytest.mark.cluster, pytest.mark.flink_smoke]


@pytest.fixture(scope="module")
def recovered_run(flink_env, tmp_path_factory):
    work_dir = str(tmp_path_factory.mktemp("exactly-once-memory"))
    env = flink_env(**checkpointing(work_dir))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.JOB_ID, JOB)
    config.set(LongTermMemoryOptions.BASE_DIR, work_dir)  # the embedded store, the default
    config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")

    stream = inputs_with_a_lone_key(env, work_dir, KEYS, INPUTS, LONE_INPUTS)
    out = (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
           .apply(RememberingAgent()).to_datastream())
    results = list(out.execute_and_collect())
    with open(os.path.join(work_dir, "calls.log")) as log:
        calls = collections.Counter(tuple(map(int, line.split())) for line in log)
    with open(os.path.join(work_dir, "last-input.log")) as log:
        last_input = log.read().split("\n")[:-1]
    memory, release = acquire_memory(StoreSpec(JOB, embedder="hashing", base_dir=work_dir))
    try:
        rows = memory.get_all(filters={"user_id": JOB}, top_k=10 * INPUTS)["results"]
    finally:
        release()
    return work_dir, results, calls, rows, last_input


def test_the_job_failed_once_and_replayed_calls_that_had_added_items(recovered_run):
    work_dir, results, calls, *_ = recovered_run
    assert os.path.exists(os.path.join(work_dir, "failed-once"))
    assert len(results) == INPUTS
    assert set(calls) == {(key_of(n), n) for n in range(INPUTS)}
    assert sum(calls.values()) > INPUTS  # some adds ran twice: the replay this test is about


def test_the_store_holds_exactly_one_row_per_input_after_recovery(recovered_run):
    _, results, _, rows, _ = recovered_run
    per_input = collections.Counter(row["memory"] for row in rows)
    assert [text for text, count in per_input.items() if count > 1] == []
    assert sorted(per_input) == sorted(f"{key_of(n)} event {n}" for n in range(INPUTS))
    assert {row["id"] for row in rows} == {item_id for *_, item_id in results}
    assert len({item_id for *_, item_id in results}) == INPUTS  # each input its own id


def test_the_input_after_the_recovery_did_not_overwrite_the_replayed_first_input(
        recovered_run):
    _, results, _, rows, last_input = recovered_run
    assert last_input[-1] == "let through"  # after the failure (and dropped before, if seen)
    lone = sorted((n, count, item_id) for key, n, count, item_id in results if key == KEYS)
    assert [(n, count) for n, count, _ in lone] == [(LONE_INPUTS[0], 1), (LONE_INPUTS[1], 2)]
    assert lone[0][2] != lone[1][2]
    texts = {row["id"]: row["memory"] for row in rows if row["agent_id"] == str(KEYS)}
    assert texts == {item_id: f"{KEYS} event {n}" for n, _, item_id in lone}


def test_each_row_is_on_its_inputs_key(recovered_run):
    rows = recovered_run[3]
    assert all(row["memory"].startswith(f"{row['agent_id']} event ") for row in rows)
