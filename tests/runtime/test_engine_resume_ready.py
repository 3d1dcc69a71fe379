"""Parked keys resumed at the end of another key's callback (what the operator does in process
mode, where PyFlink fires a poll timer only after the bundle that registered it): a key whose
call is done goes on at once, under its own key: its state is its own, its inputs stay in
order, its poll timer later finds nothing to do, and a checkpoint or the end-of-input drain
after it sees the same as with timers alone."""

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.testing import AgentHarness


def echo(value):
    return value


class CountingAgent(Agent):
    """Awaits one durable call per input, then counts the key's inputs in short-term memory
    and emits ``(key, n, count)``."""

    @action(InputEvent)
    async def count(event, ctx):
        key, n = await ctx.durable_execute_async(echo, event.input)
        memory = ctx.short_term_memory
        count = (memory.get("count") or 0) + 1
        memory.set("count", count)
        ctx.send_event(OutputEvent((key, n, count)))


def counts(harness, key):
    return harness.state_of(key, "short_term")


def test_a_key_whose_call_is_done_goes_on_in_the_next_callback_of_another_key():
    harness = AgentHarness(CountingAgent(), resume_ready=True)
    harness.process_element(("a", 0))
    harness.process_element(("b", 0))
    b_call = harness.pool.pending()[1]
    harness.pool.complete(("b", 0), handle=b_call)
    emitted = harness.process_element(("c", 0))  # no time passes: no timer fires
    assert emitted == [("b", 0, 1)]
    assert [call.call.args for call in harness.pool.pending()] == [(("a", 0),), (("c", 0),)]
    # b's count is b's: written under b, not under c (whose callback it ran in)
    assert counts(harness, "b") is not None
    assert counts(harness, "c") is None and counts(harness, "a") is None


def test_without_resume_ready_a_done_call_waits_for_its_poll_timer():
    harness = AgentHarness(CountingAgent())
    harness.process_element(("a", 0))
    harness.process_element(("b", 0))
    harness.pool.complete(("b", 0), handle=harness.pool.pending()[1])
    assert harness.process_element(("c", 0)) == []
    assert harness.advance(0.1) == [("b", 0, 1)]


def test_resumed_keys_keep_their_inputs_in_order_and_their_timers_find_nothing_left():
    harness = AgentHarness(CountingAgent(), resume_ready=True)
    for n in range(3):
        harness.process_element(("a", n))
    harness.process_element(("b", 0))
    for n in range(3):  # a's calls one after another, each resumed by b's or a timer's turn
        a_call = next(c for c in harness.pool.pending() if c.call.args[0][0] == "a")
        harness.pool.complete(a_call.call.args[0], handle=a_call)
        harness.process_element(("b", n + 1))
    assert [o for o in harness.outputs if o[0] == "a"] == [("a", 0, 1), ("a", 1, 2),
                                                            ("a", 2, 3)]
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)
    harness.end_input()
    assert [o for o in harness.outputs if o[0] == "b"] == [("b", n, n + 1) for n in range(4)]
    assert len(harness.outputs) == 7  # each input once: no timer ran a step again
    assert harness.timers() == []


def test_a_checkpoint_after_a_resume_restores_each_key_on_its_own_progress():
    harness = AgentHarness(CountingAgent(), resume_ready=True)
    harness.process_element(("a", 0))
    harness.process_element(("a", 1))
    harness.process_element(("b", 0))
    a_call = harness.pool.pending()[0]
    harness.pool.complete(("a", 0), handle=a_call)
    assert harness.process_element(("b", 1)) == [("a", 0, 1)]
    snapshot = harness.snapshot()
    restored = AgentHarness.restore(snapshot, CountingAgent(), resume_ready=True, sync=True)
    restored.end_input()
    assert sorted(restored.outputs) == [("a", 1, 2), ("b", 0, 1), ("b", 1, 2)]


def test_the_end_of_input_drain_with_resumed_keys_emits_every_input_once():
    harness = AgentHarness(CountingAgent(), resume_ready=True, run_on_wait=True)
    for n in range(4):
        for key in "abc":
            harness.process_element((key, n))
    harness.pool.complete(("b", 0), handle=harness.pool.pending()[1])
    harness.end_input(late_timers_fire=False)
    assert sorted(harness.outputs) == [(key, n, n + 1) for key in "abc" for n in range(4)]
    assert harness.timers() == []
