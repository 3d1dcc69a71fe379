"""Closing the operator: the long-term memory is released only once no worker thread can
still be inside it (real Mem0, in-memory Qdrant; its close is recorded)."""

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.testing import AgentHarness


class NoteTaker(Agent):
    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def note(event, ctx):
        notes = ctx.long_term_memory.get_memory_set("notes")
        await ctx.durable_execute_async(notes.add, f"note {event.input[1]}")
        ctx.send_event(OutputEvent(event.input))


def harness_with_a_recorded_close(tmp_path, closes):
    def memory():
        built = harness.default_memory()
        release = built.close

        def close():
            closes.append("closed")
            release()

        built.close = close
        return built

    harness = AgentHarness(NoteTaker(), memory=memory, config={
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
        LongTermMemoryOptions.VECTOR_STORE.key: {
            "provider": "qdrant", "config": {"collection_name": "close", "path": ":memory:"}},
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path), "agents.job-id": tmp_path.name})
    return harness


def test_close_leaves_the_memory_open_while_a_call_may_still_use_it(tmp_path):
    closes = []
    harness = harness_with_a_recorded_close(tmp_path, closes)
    harness.process_element(("k", 0))  # its notes.add is still pending on the pool
    still_running = harness.close()
    assert [h.call.name for h in still_running] == [
        "flink_agents_ltm.api.memory.long_term_memory.MemorySet.add"]
    assert closes == []


def test_close_releases_the_memory_once_every_call_returned(tmp_path):
    closes = []
    harness = harness_with_a_recorded_close(tmp_path, closes)
    harness.process_element(("k", 0))
    harness.pool.complete_all()
    harness.advance(0.01)
    assert harness.outputs == [("k", 0)]
    assert harness.close() == []
    assert closes == ["closed"]


def test_a_timer_flink_runs_after_the_end_of_input_closed_the_operator_does_nothing():
    """Thread mode: PyFlink closes the Python function at the end of input, and Flink then
    still runs the processing-time timers that were due (seen after a failover on the
    standalone cluster: the job failed with 'the operator is not open')."""
    from flink_agents_ltm.runtime.agent_operator import AgentOperator

    operator = AgentOperator(NoteTaker(), {})
    operator.close()
    untouched = object()  # the timer's context: a closed operator must not use it
    assert list(operator.on_timer(1_000, untouched)) == []
