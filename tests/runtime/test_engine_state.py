"""Keyed state and timers of the engine, on the in-memory harness: a key whose work ended
leaves nothing behind but, if it stored a long-term-memory item, its input counter; inputs
waiting behind a parked key cost one entry each and are never rewritten."""

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.runtime.keyed_runs import DRAIN_ROUNDS_PER_INPUT
from flink_agents_ltm.testing import AgentHarness

ENGINE_STATES = ("next_seq", "incarnation", "busy", "pending", "run")


def echo(value):
    return value


class ParkingAgent(Agent):
    """Awaits one durable call per input; touches no memory at all."""

    @action(InputEvent)
    async def call(event, ctx):
        ctx.send_event(OutputEvent(await ctx.durable_execute_async(echo, event.input)))


def engine_entries(harness):
    entries = harness.state_entries()
    return {name: entries[name] for name in ENGINE_STATES}


def test_keys_whose_work_ended_leave_no_engine_state_and_no_timers():
    harness = AgentHarness(ParkingAgent(), config={"agents.durable-async.capacity": 64})
    for n in range(3):
        for k in range(50):
            harness.process_element((f"k{k}", n))
    assert engine_entries(harness) == {"next_seq": 50, "incarnation": 0, "busy": 50,
                                       "pending": 150, "run": 0}
    assert len(harness.timers()) == 50 * (1 + DRAIN_ROUNDS_PER_INPUT * 3)  # poll, drain rounds
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)
    assert len(harness.outputs) == 150
    assert engine_entries(harness) == dict.fromkeys(ENGINE_STATES, 0)
    assert harness.timers() == []


def test_a_key_whose_input_finishes_within_its_callback_writes_no_engine_state():
    harness = AgentHarness(ParkingAgent(), sync=True)  # calls return at once
    for n in range(20):
        harness.process_element(("k", n))
    assert len(harness.outputs) == 20
    writes = {name: n for (name, op), n in harness.state_ops().items() if op == "write"}
    assert writes == {}
    assert harness.timers() == []


def test_inputs_waiting_behind_a_parked_key_are_written_once_each_and_never_rewritten():
    harness = AgentHarness(ParkingAgent())
    waiting = 300
    for n in range(waiting + 1):
        harness.process_element(("k", n))
    ops = harness.state_ops()
    assert harness.state_entries()["pending"] == waiting + 1
    assert ops["pending", "write"] == waiting + 1  # one put per input
    assert ops["pending", "read"] == 0  # nothing read back while they wait
    assert ops["busy", "write"] <= waiting + 1  # a small record, not the inputs
    while harness.pool.pending():
        harness.pool.complete_all()
        harness.advance(0.005)
    assert harness.outputs == [("k", n) for n in range(waiting + 1)]
    ops = harness.state_ops()
    assert ops["pending", "write"] == 2 * (waiting + 1)  # a put and a remove per input
    assert ops["pending", "read"] == waiting  # each input read once, when its run starts


class NotesAgent(Agent):
    """Input ``(key, n, remember)``: stores one long-term-memory item if ``remember``;
    reports the observation id its memory set is bound to (``key#seq#step``)."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def note(event, ctx):
        key, n, remember = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        if remember:
            await ctx.durable_execute_async(notes.add, f"note {n} of {key}")
        else:
            await ctx.durable_execute_async(echo, n)
        ctx.send_event(OutputEvent(notes.observation_id))


def notes_harness(tmp_path):
    return AgentHarness(NotesAgent(), run_on_wait=True, config={
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
        LongTermMemoryOptions.VECTOR_STORE.key: {
            "provider": "qdrant", "config": {"collection_name": "notes", "path": ":memory:"}},
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path),
        "agents.job-id": f"counter-{tmp_path.name}"})


def run_one(harness, value):
    harness.process_element(value)
    harness.pool.complete_all()
    harness.advance(0.005)


def test_a_key_that_stored_an_item_keeps_only_its_input_counter_and_counts_on(tmp_path):
    harness = notes_harness(tmp_path)
    run_one(harness, ("writer", 0, True))
    run_one(harness, ("writer", 1, True))
    assert harness.outputs == [harness.observation_id("writer", 0),
                               harness.observation_id("writer", 1)]
    assert engine_entries(harness) == {"next_seq": 1, "incarnation": 1, "busy": 0, "pending": 0,
                                       "run": 0}
    assert harness.state_of("writer", "next_seq") == 2
    assert harness.timers() == []
    run_one(harness, ("writer", 2, False))  # stores nothing, but the key keeps counting
    assert harness.outputs[-1] == harness.observation_id("writer", 2, 0)
    assert harness.state_of("writer", "next_seq") == 3


def test_a_key_that_never_stored_an_item_starts_again_at_input_zero(tmp_path):
    harness = notes_harness(tmp_path)
    run_one(harness, ("reader", 0, False))
    run_one(harness, ("reader", 1, False))
    # (in this run's line: a new line only for a new run of the job)
    assert harness.outputs == [harness.observation_id("reader", 0)] * 2
    assert engine_entries(harness) == dict.fromkeys(ENGINE_STATES, 0)
    assert harness.timers() == []


def test_short_term_memory_is_the_only_state_a_finished_key_keeps_of_its_own():
    class CountingAgent(Agent):
        @action(InputEvent)
        async def count(event, ctx):
            ctx.short_term_memory.set("count", (ctx.short_term_memory.get("count") or 0) + 1)
            await ctx.durable_execute_async(echo, 0)

    harness = AgentHarness(CountingAgent(), run_on_wait=True)
    for n in range(3):
        harness.process_element(("k", n))
    harness.end_input()
    assert harness.state_of("k", "short_term").keys() == {"count"}
    assert engine_entries(harness) == dict.fromkeys(ENGINE_STATES, 0)
