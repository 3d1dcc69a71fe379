"""The operator's counters and gauges, on the in-memory harness with a manual clock: each
number at a known moment, exactly (the mini-cluster test shows a reporter sees them)."""

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, MemoryUpdateEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.testing import AgentHarness


def call(key):
    return key


class MeteredAgent(Agent):
    """Input ``(key, what)``: ``call`` awaits one durable call, ``memory`` uses a memory
    set four ways; a listener answers each memory update event."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def handle(event, ctx):
        key, what = event.input
        if what == "call":
            await ctx.durable_execute_async(call, key)
        elif what == "memory":
            notes = ctx.long_term_memory.get_memory_set("notes")
            ids = notes.add(f"a note of {key}")
            notes.search("note", limit=1)
            notes.get(ids)
            notes.update(ids[0], f"an updated note of {key}")
            notes.delete(ids)
        ctx.send_event(OutputEvent(("done", key)))

    @action(MemoryUpdateEvent)
    def observe(event, ctx):
        ctx.send_event(OutputEvent(("observed", event.observation.op.value)))


@pytest.fixture
def harness(tmp_path):
    return AgentHarness(MeteredAgent(), config={
        "agents.error-handling": "ignore",
        "agents.durable-async.timeout-ms": 4000,
        "agents.job-id": f"metrics-{tmp_path.name}",
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
        LongTermMemoryOptions.VECTOR_STORE.key: {
            "provider": "qdrant", "config": {"collection_name": "m", "path": ":memory:"}},
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path)})


def levels(stats):
    return (stats.durable_calls_in_flight, stats.durable_calls_abandoned, stats.keys_parked,
            stats.inputs_waiting)


def test_counters_and_gauges_follow_calls_that_complete_fail_time_out_and_wait(harness):
    stats = harness.stats
    for value in [("a", "call"), ("b", "call"), ("b", "call"), ("c", "call"), ("d", "call")]:
        harness.process_element(value)
    assert levels(stats) == (4, 0, 4, 1)  # b's second input waits behind its first

    a_call, b_call = harness.pool.pending()[:2]
    harness.clock.advance(0.25)
    harness.pool.complete("a", handle=a_call)  # after 250 ms
    harness.pool.complete(error=ConnectionError("down"), handle=b_call)
    harness.advance(0.005)  # a completes, b's call failed (ignore mode), b's next input runs
    assert levels(stats) == (3, 0, 3, 0)

    harness.advance(3.9)  # c and d are past their deadline: timed out, threads abandoned
    assert levels(stats) == (1, 2, 1, 0)
    assert {name: getattr(stats, name) for name in (
        "inputs_received", "actions_started", "actions_completed", "actions_failed",
        "durable_calls_submitted", "durable_calls_completed", "durable_calls_failed",
        "durable_calls_timed_out", "durable_calls_replayed", "durable_call_time_ms")} == {
        "inputs_received": 5, "actions_started": 5, "actions_completed": 1,
        "actions_failed": 3, "durable_calls_submitted": 5, "durable_calls_completed": 1,
        "durable_calls_failed": 1, "durable_calls_timed_out": 2, "durable_calls_replayed": 0,
        "durable_call_time_ms": 500}  # 250 ms completed + 250 ms failed; none timed out

    harness.pool.complete_all()  # the abandoned threads return; b's call completes
    harness.advance(0.005)
    assert levels(stats) == (0, 0, 0, 0)
    assert sorted(harness.outputs) == [("done", "a"), ("done", "b")]


def test_memory_operations_count_by_kind_and_become_memory_events(harness):
    harness.process_element(("c", "memory"))
    stats = harness.stats
    assert (stats.memory_adds, stats.memory_searches, stats.memory_gets,
            stats.memory_updates, stats.memory_deletes) == (1, 1, 1, 1, 1)
    assert stats.memory_events_emitted == 5
    assert stats.actions_started == 4  # the action, and a listener per update event
    assert sorted(harness.outputs) == [("done", "c"), ("observed", "add"),
                                       ("observed", "delete"), ("observed", "update")]


def test_after_a_restore_a_recorded_call_counts_as_replayed_not_submitted():
    class TwoCalls(Agent):
        @action(InputEvent)
        async def handle(event, ctx):
            await ctx.durable_execute_async(call, 1)
            await ctx.durable_execute_async(call, 2)

    harness = AgentHarness(TwoCalls())
    harness.process_element(("k", 0))
    harness.pool.run()
    harness.advance(0.005)
    restored = AgentHarness.restore(harness.snapshot(), TwoCalls())
    restored.advance(0.005)
    assert (restored.stats.durable_calls_replayed, restored.stats.durable_calls_submitted) == \
        (1, 1)
    assert levels(restored.stats) == (1, 0, 1, 0)
