"""``ctx.run_subagent`` on the harness: a caller runs a subagent on the same key, which
chats with a scripted model and two tools and writes long-term memory
(``runtime.subagent_agents``). The subagent sees the caller's memory by copy and keeps its
writes; its calls are the caller's durable calls; a restore with a call of the nested run
in flight, or after a failure at any point of it, makes no completed call again and adds
no memory row twice."""

import collections
import json
import pickle
import uuid

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.api.memory.item_ids import ITEM_ID_NAMESPACE
from flink_agents_ltm.api.resources import ResourceDescriptor, chat_model_setup
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory
from flink_agents_ltm.testing import AgentHarness
from runtime.subagent_agents import POINTS, Coordinator, Researcher

JOB = "subagents"
CALLS = ("model0", "lookup", "note", "model1", "remember", "publish")  # per input, in order
POOL_CALLS = 5  # the calls above but the inline note


def config(tmp_path, **options):
    return {"agents.job-id": JOB, "long-term-memory.embedded.base-dir": str(tmp_path),
            **options}


def inputs(tmp_path, fail_at=None, key="ann"):
    return [(key, 1, str(tmp_path), None), (key, 2, str(tmp_path), fail_at)]


def calls(tmp_path):
    path = tmp_path / "calls.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return collections.Counter(lines)


def each_call_once(key="ann", inputs=(1, 2)):
    return collections.Counter(f"{c} {key} {n}" for n in inputs for c in CALLS)


def rows(memory, key="ann"):
    memory.switch_context(key, None, True)
    return [(item.id, item.value) for item in memory.get_memory_set("facts").get()]


def short_term(harness, key="ann"):
    return {path: pickle.loads(payload)
            for path, payload in harness.state_of(key, "short_term").items()}


def settle(harness):
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)


def expected_output(n, count, seen):
    answer = f"answer to ann/{n}: fact ann-{n}"
    return ("ann", n, count, {"answer": answer, "seen_count": seen, "own_count": 1000 + seen,
                              "sub_note": f"researched {n}", "tool_note": None},
            {"count": count, "sub_note": None, "tool_note": None, "sub_sensory": None})


def without_item_ids(outputs):
    return [(key, n, count, {k: v for k, v in found.items() if k != "item_id"}, seen)
            for key, n, count, found, seen in outputs]


def reopened(memory):
    """The memory a restarted process builds over the same store: same rows, none of the
    failed process's counts of the items its unfinished actions minted."""
    fresh = InMemoryLongTermMemory(JOB)
    fresh._sets = memory._sets
    return fresh


@pytest.fixture
def memory():
    return InMemoryLongTermMemory(JOB)


@pytest.fixture
def completed_run(tmp_path, memory):
    harness = AgentHarness(Coordinator(), config=config(tmp_path), memory=lambda: memory)
    for value in inputs(tmp_path):
        harness.process_element(value)
        settle(harness)
    return harness


def test_the_subagent_answers_with_its_outputs_and_sees_the_caller_s_pending_writes_by_copy(
        completed_run):
    """seen_count: the caller's count, written in the same action and not yet persisted;
    own_count and sub_note: the subagent's writes, seen by its later action; tool_note: the
    chat's write inside the subagent, seen by no action."""
    assert without_item_ids(completed_run.outputs) == [expected_output(1, 1, 1),
                                                       expected_output(2, 2, 2)]


def test_the_caller_s_memory_never_holds_the_subagent_s_writes(completed_run):
    assert short_term(completed_run) == {"count": 2}


def test_the_subagent_s_calls_run_once_each_and_its_rows_are_the_caller_s_key_s(
        completed_run, tmp_path, memory):
    assert calls(tmp_path) == each_call_once()
    stored = rows(memory)
    assert sorted(value for _, value in stored) == [
        "ann asked 1", "ann asked 2", "answer to ann/1: fact ann-1",
        "answer to ann/2: fact ann-2"]
    assert {found["item_id"] for *_, found, _ in completed_run.outputs} <= {i for i, _ in stored}


def item_id(observation_id, position):
    return str(uuid.uuid5(ITEM_ID_NAMESPACE, json.dumps(
        [JOB, "ann", "facts", observation_id, position, 0])))


def test_the_subagent_s_items_get_the_caller_s_observation_id_and_write_positions(
        completed_run, memory):
    """So a replay of the caller mints them again: the body's add at ``body``, the add in
    ``remember_fact`` at the position of the caller's fifth durable call (model, lookup,
    note, model, remember_fact)."""
    second = completed_run.observation_id("ann", 1)
    assert dict(rows(memory))[item_id(second, "body")] == "ann asked 2"
    assert completed_run.outputs[1][3]["item_id"] == item_id(second, "call4")


@pytest.mark.parametrize("in_flight", range(POOL_CALLS))
def test_a_restore_with_a_nested_call_in_flight_repeats_no_completed_call_and_no_row(
        in_flight, tmp_path, memory):
    """The snapshot is taken while the second input's ``in_flight``-th pool call runs (the
    calls before it recorded in Flink state); that call never ends in the failed process."""
    harness = AgentHarness(Coordinator(), config=config(tmp_path), memory=lambda: memory)
    first, second = inputs(tmp_path)
    harness.process_element(first)
    settle(harness)
    harness.process_element(second)
    for _ in range(in_flight):
        harness.pool.complete_all()
        harness.advance(0.005)
    assert len(harness.pool.pending()) == 1
    snapshot = harness.snapshot()

    after = reopened(memory)
    restored = AgentHarness.restore(snapshot, Coordinator(), config=config(tmp_path),
                                    memory=lambda: after)
    restored.advance(0.005)
    settle(restored)
    assert without_item_ids(harness.outputs + restored.outputs) == [
        expected_output(1, 1, 1), expected_output(2, 2, 2)]
    assert calls(tmp_path) == each_call_once()
    assert len(rows(memory)) == 4
    assert short_term(restored) == {"count": 2}
    assert restored.stats.durable_calls_replayed == in_flight + (in_flight >= 2)  # + note


def run_failing_once(tmp_path, memory, fail_at, **options):
    """Feed the inputs, a snapshot after every callback (a checkpoint as late as can be);
    when a callback fails the job, restore the last snapshot into a new harness and go on,
    feeding again the input of a failed ``process_element``. Returns the outputs and how
    many failures there were."""
    settings = config(tmp_path, **options)
    harness = AgentHarness(Coordinator(), config=settings, memory=lambda: memory)
    snapshot, outputs, failures = harness.snapshot(), [], 0
    feed = list(inputs(tmp_path, fail_at))
    while feed or harness.pool.pending():
        try:
            if feed and not harness.pool.pending():
                out = harness.process_element(feed[0])
                feed.pop(0)
            else:
                harness.pool.complete_all()
                out = harness.advance(0.005)
        except AgentActionError:
            failures += 1
            after = reopened(memory)
            harness = AgentHarness.restore(snapshot, Coordinator(), config=settings,
                                           memory=lambda after=after: after)
            out = harness.advance(0.005)  # the restored timers fire: the run is replayed
        outputs += out
        snapshot = harness.snapshot()
    return outputs, failures


@pytest.mark.parametrize("fail_at", POINTS)
def test_a_failure_at_any_point_of_the_nested_run_repeats_no_completed_call_and_no_row(
        fail_at, tmp_path, memory):
    """With the action-state store: a call that completed in the callback that failed is
    answered by its written-ahead result."""
    outputs, failures = run_failing_once(tmp_path, memory, fail_at,
                                         **{"agents.action-state.store": "sqlite"})
    assert failures == 1
    assert (tmp_path / f"failed-{fail_at}").exists()
    assert without_item_ids(outputs) == [expected_output(1, 1, 1), expected_output(2, 2, 2)]
    assert calls(tmp_path) == each_call_once()
    assert len(rows(memory)) == 4


# ------------------------------------------------------------------ what run_subagent takes


class Ping(Event):
    pass


class Echo(Agent):
    @action(InputEvent)
    async def echo(event, ctx):
        ctx.send_event(OutputEvent(("echo", event.input)))
        ctx.send_event(OutputEvent(("again", event.input)))


class Unheard(Agent):
    @action(Ping)
    async def pong(event, ctx):
        ctx.send_event(OutputEvent("pong"))


class WithItsOwnModel(Agent):
    @chat_model_setup
    def its_model():
        return ResourceDescriptor(ScriptedChatModelSetup, answers=["hi"])

    @action(InputEvent)
    async def chat(event, ctx):
        ctx.send_event(OutputEvent("never"))


class Calling(Agent):
    @action(InputEvent)
    async def call(event, ctx):
        subagent, value = event.input[1]
        try:
            result = await ctx.run_subagent(subagent, value)
        except (TypeError, ValueError) as error:
            result = f"{type(error).__name__}: {error}"
        ctx.send_event(OutputEvent(result))


class CallingFromAPlainAction(Agent):
    @action(InputEvent)
    def call(event, ctx):
        ctx.run_subagent(Echo(), 1)


def outcome(subagent, value):
    harness = AgentHarness(Calling())
    harness.process_element(("k", (subagent, value)))
    settle(harness)
    [result] = harness.outputs
    return result


def test_a_value_reaches_the_subagent_as_an_input_event_and_its_outputs_come_in_order():
    assert outcome(Echo(), 7) == [("echo", 7), ("again", 7)]


def test_an_event_reaches_the_subagent_as_it_is():
    assert outcome(Unheard(), Ping()) == ["pong"]


def test_a_first_event_no_action_of_the_subagent_listens_to_is_refused():
    assert outcome(Unheard(), 7) == ("ValueError: no action of subagent Unheard listens to "
                                     "InputEvent: declare one with @action(InputEvent)")


def test_a_subagent_that_declares_resources_is_refused_naming_them():
    assert outcome(WithItsOwnModel(), 7) == (
        "ValueError: subagent WithItsOwnModel (run by action 'call') declares resources "
        "its_model; a subagent uses the job's resources: declare them on the calling agent "
        "or with agents_env.add_resource")


def test_what_is_not_an_agent_is_refused():
    assert outcome(Researcher, 7) == "TypeError: ctx.run_subagent takes an Agent instance, " \
                                     "got type"


def test_a_plain_action_cannot_run_a_subagent():
    harness = AgentHarness(CallingFromAPlainAction())
    with pytest.raises(AgentActionError, match="ctx.run_subagent returns an awaitable, but "
                                               "action 'call' is a plain function"):
        harness.process_element(("k", 1))


class Inner(Agent):
    @action(InputEvent)
    async def inner(event, ctx):
        memory = ctx.short_term_memory
        seen = (memory.get("outer"), memory.get("middle"))
        memory.set("inner", "inner's")
        ctx.send_event(OutputEvent(seen))


class Middle(Agent):
    @action(InputEvent)
    async def middle(event, ctx):
        ctx.short_term_memory.set("middle", "middle's")
        [seen] = await ctx.run_subagent(Inner(), event)
        ctx.send_event(OutputEvent((seen, ctx.short_term_memory.get("inner"))))


class Outer(Agent):
    @action(InputEvent)
    async def outer(event, ctx):
        ctx.short_term_memory.set("outer", "outer's")
        [found] = await ctx.run_subagent(Middle(), event)
        ctx.send_event(OutputEvent((found, ctx.short_term_memory.get("middle"))))


def test_a_subagent_of_a_subagent_sees_both_callers_and_neither_sees_its_writes():
    harness = AgentHarness(Outer())
    harness.process_element(("k", 1))
    assert harness.outputs == [((("outer's", "middle's"), None), None)]
    assert short_term(harness, "k") == {"outer": "outer's"}
