"""``ctx.run_subagent`` on PyFlink's mini-cluster, failed at each point of the nested run.

The caller (``runtime.subagent_agents.Coordinator``) counts its inputs in short-term
memory and runs a subagent on the same key that chats with a scripted model and two tools
(one on the worker pool, one inline that writes the chat's memory), adds a long-term memory
item in its body and one in a durable call, and answers; the caller then makes a call of its
own. Six inputs each fail once, at one point each: in the second model call, in each tool,
after the durable add, in the subagent's second action and in the caller after the
subagent returned. The points on the worker pool wait for two more checkpoints first, so
the restored checkpoint holds the nested run in flight. With retained action state and the
action-state store (``sqlite``), every call of every input ran exactly once, the embedded
store holds exactly two rows per input, and the caller never saw the subagent's writes: its
count goes 1, 2, 3... per key."""

import collections
import os

import pytest
from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from runtime.flink_options import checkpointing
from runtime.subagent_agents import POINTS, Coordinator

KEYS = 3
INPUTS = 36
# (n -> point): spread over the keys, early enough that input still flows (and checkpoints
# complete) while the trigger waits for its two checkpoints
TRIGGERS = {3 + 3 * i + (i % KEYS): point for i, point in enumerate(POINTS)}
SPACING_S = 0.2
JOB = "subagents-job"
CALLS = ("model0", "lookup", "note", "model1", "remember", "publish")

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def recovered_run(flink_env, tmp_path_factory):
    work_dir = str(tmp_path_factory.mktemp("subagents"))
    env = flink_env(**checkpointing(work_dir, **{
        "restart-strategy.fixed-delay.attempts": str(len(POINTS) + 2)}))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.JOB_ID, JOB)
    config.set(AgentsOptions.ACTION_STATE_STORE, "sqlite")
    config.set(LongTermMemoryOptions.BASE_DIR, work_dir)  # the embedded store
    config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")

    def to_input(n, work_dir=work_dir, triggers=TRIGGERS, keys=KEYS, spacing_s=SPACING_S):
        import time
        time.sleep(spacing_s)
        return (n % keys, n, work_dir, triggers.get(n))

    numbers = env.from_source(NumberSequenceSource(0, INPUTS - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    stream = numbers.map(to_input, output_type=Types.PICKLED_BYTE_ARRAY())
    out = (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
           .apply(Coordinator()).to_datastream())
    results = list(out.execute_and_collect())
    with open(os.path.join(work_dir, "calls.log")) as log:
        calls = collections.Counter(log.read().splitlines())
    memory, release = acquire_memory(StoreSpec(JOB, embedder="hashing", base_dir=work_dir))
    try:
        rows = memory.get_all(filters={"user_id": JOB}, top_k=10 * INPUTS)["results"]
    finally:
        release()
    return work_dir, results, calls, rows


def test_the_job_failed_once_at_each_point_and_every_input_has_one_output(recovered_run):
    work_dir, results, _, _ = recovered_run
    assert sorted(p for p in POINTS if os.path.exists(os.path.join(work_dir, f"failed-{p}"))
                  ) == sorted(POINTS)
    assert sorted(n for _, n, *_ in results) == list(range(INPUTS))


def test_every_call_of_the_nested_runs_ran_exactly_once(recovered_run):
    calls = recovered_run[2]
    assert calls == collections.Counter(
        f"{call} {n % KEYS} {n}" for n in range(INPUTS) for call in CALLS)


def test_the_store_holds_exactly_the_two_rows_of_each_input(recovered_run):
    rows = recovered_run[3]
    texts = collections.Counter((row["agent_id"], row["memory"]) for row in rows)
    assert texts == collections.Counter(
        [(str(n % KEYS), f"{n % KEYS} asked {n}") for n in range(INPUTS)]
        + [(str(n % KEYS), f"answer to {n % KEYS}/{n}: fact {n % KEYS}-{n}")
           for n in range(INPUTS)])


def test_the_caller_s_memory_never_held_the_subagent_s_writes(recovered_run):
    """Per key the caller's count goes 1, 2, 3...: the subagent's count of 1000 and more
    never reached it; nor did its note, the chat's note or its sensory memory."""
    results = recovered_run[1]
    by_key = collections.defaultdict(list)
    for key, n, count, found, seen in sorted(results, key=lambda r: r[1]):
        by_key[key].append(count)
        assert seen == {"count": count, "sub_note": None, "tool_note": None,
                        "sub_sensory": None}
        assert (found["seen_count"], found["own_count"], found["sub_note"]) == (
            count, 1000 + count, f"researched {n}")
    assert dict(by_key) == {
        k: list(range(1, INPUTS // KEYS + 1)) for k in range(KEYS)}


def test_each_answer_names_the_row_it_added(recovered_run):
    _, results, _, rows = recovered_run
    stored = {row["id"]: row["memory"] for row in rows}
    assert {stored[found["item_id"]] for *_, found, _ in results} == {
        f"answer to {n % KEYS}/{n}: fact {n % KEYS}-{n}" for n in range(INPUTS)}
