"""ctx.chat across a checkpoint and a failure, on the mini-cluster.

A caller increments a short-term counter, chats with a scripted model on
127.0.0.1 (two tool calls, then an answer), then awaits another durable call.
The trigger input fails once, after a checkpoint taken while it waits. The
counter must end incremented exactly once per input, for HashMap and RocksDB,
with and without retained action state; with it the model is not asked again
on replay, without it the chat runs again. Chat children that shared and
flushed the caller's cache (the bug) break the counter."""

import collections
import json
import os

import pytest
from chat.scripted_server import ScriptedServer, openai_reply
from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from runtime.chat_agents_for_tests import (
    MODEL,
    ChatCountingAgent,
    SharedCacheChatCountingAgent,
)
from runtime.flink_options import checkpointing

KEYS = 3
INPUTS = 36
TRIGGER = (1, 10)  # (key, n): fails once, after a checkpoint taken while it waits
# The input lasts ~7 s, so the trigger waits for its checkpoints while input still
# flows (once a bounded input has ended, the operator drains and takes no checkpoint),
# even when the operator starts late: importing the openai SDK takes seconds on a busy
# machine.
SPACING_S = 0.2

pytestmark = pytest.mark.cluster


def model_script(request):
    """Asks for two peeks; once they answered, answers with what they saw."""
    messages = request.body["messages"]
    if messages[-1]["role"] == "tool":
        seen = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        return openai_reply(json.dumps(seen))
    return openai_reply(tool_calls=[("a", "peek", {}), ("b", "peek", {})])


def run_job(flink_env, work_dir, backend, retained, agent):
    with ScriptedServer(model_script) as server:
        env = flink_env(**checkpointing(work_dir, **{"state.backend.type": backend}))
        agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
        agents_env.get_config().set(AgentsOptions.RETAIN_ACTION_STATE, retained)
        agents_env.add_resource(MODEL, ResourceType.CHAT_MODEL, ResourceDescriptor(
            OpenAIChatModelSetup, model="scripted", base_url=server.url, api_key_env=None))

        def to_input(n, work_dir=work_dir, spacing_s=SPACING_S):
            import time
            time.sleep(spacing_s)
            return (n % KEYS, n, work_dir, (n % KEYS, n) == TRIGGER)

        numbers = env.from_source(NumberSequenceSource(0, INPUTS - 1),
                                  WatermarkStrategy.no_watermarks(), "numbers")
        stream = numbers.map(to_input, output_type=Types.PICKLED_BYTE_ARRAY())
        out = (agents_env.from_datastream(stream, key_selector=lambda r: r[0])
               .apply(agent()).to_datastream())
        results = list(out.execute_and_collect())
    asked = collections.Counter(r.body["messages"][0]["content"] for r in server.requests)
    return results, asked


def trigger_question():
    return f"input {TRIGGER[1]} of key {TRIGGER[0]}"


@pytest.fixture(scope="module", params=[("hashmap", True), ("hashmap", False),
                                        ("rocksdb", True), ("rocksdb", False)],
                ids=lambda p: f"{p[0]}-{'retained' if p[1] else 'not-retained'}")
def recovered_chat_run(request, flink_env, tmp_path_factory):
    backend, retained = request.param
    work_dir = str(tmp_path_factory.mktemp(f"chat-{backend}-{retained}"))
    results, asked = run_job(flink_env, work_dir, backend, retained, ChatCountingAgent)
    return retained, work_dir, results, asked


def counts_by_key(results):
    counts = collections.defaultdict(list)
    for key, n, count, _, _ in results:
        counts[key].append((n, count))
    return {key: [count for _, count in sorted(pairs)] for key, pairs in counts.items()}


def test_the_job_failed_once_after_the_chat_and_recovered(recovered_chat_run):
    _, work_dir, results, _ = recovered_chat_run
    assert os.path.exists(os.path.join(work_dir, "failed-once"))
    assert sorted(n for _, n, _, _, _ in results) == list(range(INPUTS))


def test_each_counter_is_incremented_exactly_once_per_input(recovered_chat_run):
    _, _, results, _ = recovered_chat_run
    assert counts_by_key(results) == {key: list(range(1, INPUTS // KEYS + 1))
                                      for key in range(KEYS)}


def test_tools_read_the_caller_s_pending_write_and_share_one_scope_per_chat(
        recovered_chat_run):
    _, _, results, _ = recovered_chat_run
    assert len(results) == INPUTS
    assert [seen for _, _, _, seen, _ in results] == [
        [{"count": count, "note": None}, {"count": count, "note": "written by a tool"}]
        for _, _, count, _, _ in results]


def test_the_caller_never_sees_what_its_chat_wrote(recovered_chat_run):
    _, _, results, _ = recovered_chat_run
    assert {note for _, _, _, _, note in results} == {None}


def test_the_model_is_asked_again_on_replay_only_without_retained_action_state(
        recovered_chat_run):
    retained, _, _, asked = recovered_chat_run
    assert asked[trigger_question()] == (2 if retained else 4)


def test_chat_children_that_flush_the_caller_s_cache_break_the_counter(
        flink_env, tmp_path_factory):
    work_dir = str(tmp_path_factory.mktemp("chat-shared-cache"))
    results, _ = run_job(flink_env, work_dir, "hashmap", True, SharedCacheChatCountingAgent)
    counts = counts_by_key(results)
    assert counts[TRIGGER[0]] != list(range(1, INPUTS // KEYS + 1)), \
        "the shared-cache variant should have counted the trigger input twice"
