"""What a failing action does, on the in-memory harness: ``ignore`` drops the input's whole
run, ``fail`` raises one line naming action, agent, key and input; misuse gets a clear
error (asyncio awaitables, a memory factory building the wrong thing, a key selector)."""

import asyncio

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.runtime.agent_operator import CheckedKeySelector, KeySelectorError
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.testing import AgentHarness
from runtime.agents_for_tests import BadInputAgent


def echo(value):
    return value


class Charged(Event):
    def __init__(self, amount):
        self.amount = amount


class BillingAgent(Agent):
    """Input ``(key, amount, fail_second_step)``. Step 1 adds to the key's balance, emits a
    receipt and sends ``Charged``; step 2 (after a durable call) may fail."""

    @action(InputEvent)
    async def charge(event, ctx):
        key, amount, _ = event.input
        balance = (ctx.short_term_memory.get("balance") or 0) + amount
        ctx.short_term_memory.set("balance", balance)
        ctx.sensory_memory.set("fail", event.input[2])
        ctx.send_event(OutputEvent(("receipt", key, amount, balance)))
        ctx.send_event(Charged(await ctx.durable_execute_async(echo, amount)))

    @action(Charged)
    async def confirm(event, ctx):
        await ctx.durable_execute_async(echo, event.amount)
        if ctx.sensory_memory.get("fail"):
            raise ValueError("the payment provider refused")
        ctx.send_event(OutputEvent(("confirmed", ctx.key, ctx.short_term_memory.get("balance"))))


def billing(**options):
    return AgentHarness(BillingAgent(), run_on_wait=True, config=options)


def test_ignore_mode_drops_the_whole_run_earlier_steps_outputs_and_writes_included():
    harness = billing(**{"agents.error-handling": "ignore"})
    for value in [("a", 5, False), ("a", 7, True), ("b", 1, False), ("a", 2, False)]:
        harness.process_element(value)
    harness.end_input()
    assert sorted(harness.outputs) == sorted([
        ("receipt", "a", 5, 5), ("confirmed", "a", 5),
        ("receipt", "a", 2, 7), ("confirmed", "a", 7),  # the failed 7 left no trace
        ("receipt", "b", 1, 1), ("confirmed", "b", 1)])
    assert harness.stats.actions_failed == 1
    assert harness.state_of("a", "run") is None and harness.timers() == []


def test_fail_mode_raises_one_line_naming_the_action_agent_key_and_input():
    harness = billing()
    harness.process_element(("a", 7, True))
    with pytest.raises(AgentActionError) as failure:
        harness.end_input()
    assert str(failure.value) == (
        "action 'confirm' of agent BillingAgent failed for key 'a' (input #0: ('a', 7, True), "
        "Charged): ValueError: the payment provider refused")
    assert harness.outputs == []


@pytest.mark.parametrize("what, cause", [
    ("raise", "ValueError: this input is malformed"),
    ("unknown-event", "ValueError: no action listens to Unheard"),
    ("missing-resource", "MissingResourceError: no resource named 'no_such_model'"),
    ("unserializable", "DurableResultNotSerializableError: durable call _thread.allocate_lock "
                       "returned a lock, which cannot be recorded in Flink state"),
    ("failing-call", "DurableCallError: durable call runtime.agents_for_tests.broken_call failed: "
                     "ConnectionError: the backend is down"),
    ("timeout", "DurableCallTimeoutError: durable call runtime.agents_for_tests.sleep_then did not "
                "finish within 0.3 s (agents.durable-async.timeout-ms)"),
])
def test_each_kind_of_failing_action_names_the_action_key_input_and_cause(what, cause):
    harness = AgentHarness(BadInputAgent(), config={"agents.durable-async.timeout-ms": 300})
    with pytest.raises(AgentActionError) as failure:  # noqa: PT012 - at whichever step fails
        harness.process_element(("bad", 1, what))
        while True:  # run the calls as they come; a timeout lets time pass instead
            if what == "timeout":
                harness.advance(0.31)
            else:
                harness.pool.run()
                harness.advance(0.005)
    assert str(failure.value).startswith(
        f"action 'handle' of agent BadInputAgent failed for key 'bad' (input #0: ('bad', 1, "
        f"'{what}'), InputEvent): {cause}")


class SleepingAgent(Agent):
    @action(InputEvent)
    async def wait(event, ctx):
        await asyncio.sleep(event.input[1])
        ctx.send_event(OutputEvent("woke up"))


class GatheringAgent(Agent):
    @action(InputEvent)
    async def gather(event, ctx):
        await asyncio.gather(ctx.durable_execute_async(echo, 1))


@pytest.mark.parametrize("agent, value", [(SleepingAgent(), ("k", 1)),
                                          (SleepingAgent(), ("k", 0)),
                                          (GatheringAgent(), ("k", 0))],
                         ids=["sleep", "sleep-0", "gather"])
def test_awaiting_asyncio_in_an_action_fails_with_a_clear_error(agent, value):
    harness = AgentHarness(agent)
    with pytest.raises(AgentActionError) as failure:
        harness.process_element(value)
    message = str(failure.value)
    assert "UnsupportedAwaitableError: the action " in message
    assert ("actions run on Flink's mailbox thread, not in an asyncio event loop: they may only "
            "await ctx.durable_execute_async(...) and ctx.chat(...)") in message
    assert "no running event loop" not in message
    assert asyncio._get_running_loop() is None  # the refusing loop is gone again


def test_a_memory_factory_that_builds_no_action_memory_is_refused_by_name():
    class Reader(Agent):
        @action(InputEvent)
        def read(event, ctx):
            ctx.long_term_memory.get_memory_set("notes")

    harness = AgentHarness(Reader(), memory=lambda: object())
    with pytest.raises(AgentActionError, match="TypeError: the long-term memory built by the "
                                               "harness's memory is a object, which does not "
                                               "implement ActionMemory"):
        harness.process_element(("k", 0))


def test_a_failing_key_selector_is_named_with_the_record():
    def customer(record):
        return record["customer"]

    selector = CheckedKeySelector(customer)
    assert selector({"customer": "ann"}) == "ann"
    with pytest.raises(KeySelectorError) as failure:
        selector({"name": "ann"})
    assert str(failure.value) == (
        "the key selector test_a_failing_key_selector_is_named_with_the_record.<locals>."
        "customer given to from_datastream failed on the record {'name': 'ann'}: KeyError: "
        "'customer'")
    with pytest.raises(KeySelectorError, match="returned None for the record"):
        CheckedKeySelector(lambda r: None)("x")
