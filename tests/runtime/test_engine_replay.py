"""Recovery on the in-memory harness: a snapshot taken while an action waits, restored into a
fresh engine. Recorded calls answer only the call they were recorded for; completed steps
are skipped and their outputs and short-term writes count once."""

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.testing import AgentHarness

calls = []


def lookup(n):
    calls.append(("lookup", n))
    return n * 10


def enrich(n):
    calls.append(("enrich", n))
    return n + 1


@pytest.fixture(autouse=True)
def no_calls_yet():
    calls.clear()


class Checked(Event):
    def __init__(self, value):
        self.value = value


class LookupAgent(Agent):
    """Step 1 counts, emits a receipt, calls lookup then enrich, sends Checked; step 2
    calls enrich again and emits the result."""

    @action(InputEvent)
    async def look_up(event, ctx):
        key, n = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        ctx.send_event(OutputEvent(("receipt", key, n, count)))
        value = await ctx.durable_execute_async(lookup, n)
        ctx.send_event(Checked(await ctx.durable_execute_async(enrich, value)))

    @action(Checked)
    async def finish(event, ctx):
        value = await ctx.durable_execute_async(enrich, event.value)
        ctx.send_event(OutputEvent(("done", ctx.key, value, ctx.short_term_memory.get("count"))))


class ChangedLookupAgent(LookupAgent):
    """The same agent after a code change: its first call is another function."""

    @action(InputEvent)
    async def look_up(event, ctx):
        _, n = event.input
        ctx.short_term_memory.set("count", (ctx.short_term_memory.get("count") or 0) + 1)
        ctx.send_event(Checked(await ctx.durable_execute_async(enrich, n)))


class ShortcutLookupAgent(LookupAgent):
    """After a code change it answers from short-term memory, without the calls."""

    @action(InputEvent)
    async def look_up(event, ctx):
        ctx.send_event(Checked(0))


def complete_and_poll(harness):
    harness.pool.run()
    harness.advance(0.005)


def interrupted_after_the_first_call(agent=LookupAgent, **options):
    """Snapshot while ``enrich`` runs, after ``lookup`` was recorded."""
    harness = AgentHarness(agent(), config=options or None)
    harness.process_element(("k", 1))
    complete_and_poll(harness)  # lookup recorded; enrich submitted
    assert [c.call.name for c in harness.pool.pending()] == ["runtime.test_engine_replay.enrich"]
    return harness.snapshot()


def test_a_restored_run_replays_the_recorded_call_and_runs_the_interrupted_one():
    snapshot = interrupted_after_the_first_call()
    restored = AgentHarness.restore(snapshot, LookupAgent())
    calls.clear()
    restored.advance(0.005)  # the restored poll timer fires: the run is replayed
    assert [c.call.name for c in restored.pool.pending()] == [
        "runtime.test_engine_replay.enrich"]
    complete_and_poll(restored)
    complete_and_poll(restored)
    assert calls == [("enrich", 10), ("enrich", 11)]  # lookup is not called again
    assert restored.outputs == [("receipt", "k", 1, 1), ("done", "k", 12, 1)]
    assert restored.stats.durable_calls_replayed == 1
    assert restored.stats.durable_calls_submitted == 2


def test_without_retained_action_state_the_interrupted_step_calls_again():
    snapshot = interrupted_after_the_first_call(**{"agents.action-state.retained": False})
    restored = AgentHarness.restore(snapshot, LookupAgent(), run_on_wait=True)
    calls.clear()
    restored.end_input()
    assert calls == [("lookup", 1), ("enrich", 10), ("enrich", 11)]
    assert restored.outputs == [("receipt", "k", 1, 1), ("done", "k", 12, 1)]


def test_a_completed_step_is_skipped_and_its_output_and_count_come_once():
    harness = AgentHarness(LookupAgent())
    harness.process_element(("k", 1))
    complete_and_poll(harness)
    complete_and_poll(harness)  # step 1 completed; step 2 waits for its enrich
    assert harness.outputs == []  # nothing leaves a run before it ends
    restored = AgentHarness.restore(harness.snapshot(), LookupAgent(), run_on_wait=True)
    calls.clear()
    restored.end_input()
    assert calls == [("enrich", 11)]
    assert restored.outputs == [("receipt", "k", 1, 1), ("done", "k", 12, 1)]
    assert restored.state_of("k", "short_term").keys() == {"count"}


def test_a_replay_that_calls_another_function_fails_with_a_non_determinism_error():
    snapshot = interrupted_after_the_first_call()
    restored = AgentHarness.restore(snapshot, ChangedLookupAgent())
    with pytest.raises(AgentActionError) as failure:
        restored.advance(0.005)
    assert "NonDeterministicReplayError: durable call #0 of this step was recorded as " \
           "runtime.test_engine_replay.lookup, but the replayed action now calls " \
           "runtime.test_engine_replay.enrich" in str(failure.value)
    assert calls == [("lookup", 1)]  # the other function was not called either


def test_a_replay_that_skips_recorded_calls_fails_with_a_non_determinism_error():
    snapshot = interrupted_after_the_first_call()
    restored = AgentHarness.restore(snapshot, ShortcutLookupAgent())
    with pytest.raises(AgentActionError, match="NonDeterministicReplayError: the replayed action "
                                               "completed after 0 durable call"):
        restored.advance(0.005)


def test_inputs_that_waited_behind_the_interrupted_one_run_after_it_in_order():
    harness = AgentHarness(LookupAgent())
    for n in range(1, 4):
        harness.process_element(("k", n))
    complete_and_poll(harness)
    restored = AgentHarness.restore(harness.snapshot(), LookupAgent(), run_on_wait=True)
    restored.end_input()
    done = [o for o in restored.outputs if o[0] == "done"]
    assert done == [("done", "k", 10 * n + 2, n) for n in range(1, 4)]
