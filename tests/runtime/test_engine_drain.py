"""End of a bounded input, on the in-memory harness: every parked action finishes, in both
execution modes' timer semantics, with calls of different keys still in flight together."""

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.runtime.keyed_runs import (
    DRAIN_BASE,
    DRAIN_ROUNDS_PER_INPUT,
    AgentActionError,
)
from flink_agents_ltm.testing import AgentHarness


def double(n):
    return 2 * n


def hang():
    raise AssertionError("a hanging call is never run")


class Half(Event):
    def __init__(self, n):
        self.n = n


class TwoCallAgent(Agent):
    """Two durable calls in one action, a second step with one more: three calls an input."""

    @action(InputEvent)
    async def first(event, ctx):
        _, n = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        a = await ctx.durable_execute_async(double, n)
        b = await ctx.durable_execute_async(double, a)
        ctx.send_event(Half(b))

    @action(Half)
    async def second(event, ctx):
        c = await ctx.durable_execute_async(double, event.n)
        ctx.send_event(OutputEvent((ctx.key, c, ctx.short_term_memory.get("count"))))


KEYS, PER_KEY = 5, 4


def fed_harness(**kwargs):
    harness = AgentHarness(TwoCallAgent(), run_on_wait=True, **kwargs)
    for n in range(PER_KEY):
        for k in range(KEYS):
            harness.process_element((f"k{k}", n))
    return harness


def expected_outputs():
    return sorted((f"k{k}", 8 * n, n + 1) for k in range(KEYS) for n in range(PER_KEY))


@pytest.mark.parametrize("late_timers_fire", [True, False], ids=["thread-mode", "process-mode"])
def test_the_final_watermark_finishes_every_parked_action_and_every_waiting_input(
        late_timers_fire):
    harness = fed_harness()
    assert harness.outputs == []  # all parked or waiting: nothing finished yet
    harness.end_input(late_timers_fire=late_timers_fire)
    assert sorted(harness.outputs) == expected_outputs()
    assert harness.stats.actions_failed == 0


def test_the_drain_does_not_need_a_timer_registered_during_it():
    """Process mode registers an on_timer's timers only after the final-watermark loop;
    no such timer may be needed."""
    harness = fed_harness()
    registered_before = {t.timestamp for t in harness.timers() if t.event_time}
    harness.end_input(late_timers_fire=False)
    assert sorted(harness.outputs) == expected_outputs()
    assert registered_before == {DRAIN_BASE + r for r in range(DRAIN_ROUNDS_PER_INPUT * PER_KEY)}
    assert harness.timers() == []


def test_calls_of_different_keys_stay_in_flight_together_during_the_drain():
    harness = fed_harness()
    in_flight = []
    wait = harness.pool.wait

    def watched_wait(handles, until):
        in_flight.append(harness.pool.in_flight)
        return wait(handles, until)

    harness.pool.wait = watched_wait
    harness.end_input()
    assert max(in_flight) == KEYS


def test_a_call_that_never_returns_fails_its_action_at_its_deadline_during_the_drain():
    harness = AgentHarness(TwoCallAgent())  # calls complete only when the test says
    harness.process_element(("k0", 0))
    with pytest.raises(AgentActionError, match="DurableCallTimeoutError: durable call "
                                               "runtime.test_engine_drain.double did not "
                                               "finish within 60 s"):
        harness.end_input()


class SometimesHangingAgent(Agent):
    @action(InputEvent)
    async def call(event, ctx):
        key, n = event.input
        await ctx.durable_execute_async(hang if key == "hung" else double, n)
        ctx.send_event(OutputEvent((key, n)))


def test_in_ignore_mode_a_hung_call_drops_its_input_and_the_drain_goes_on():
    harness = AgentHarness(SometimesHangingAgent(), config={"agents.error-handling": "ignore"},
                           run_on_wait=True)
    harness.pool.hanging.add("runtime.test_engine_drain.hang")
    for n in range(2):
        for key in ("hung", "k0"):
            harness.process_element((key, n))
    harness.end_input(late_timers_fire=False)
    assert sorted(harness.outputs) == [("k0", 0), ("k0", 1)]
    assert harness.stats.durable_calls_timed_out == 2
    assert harness.stats.actions_failed == 2
    assert harness.timers() == []
