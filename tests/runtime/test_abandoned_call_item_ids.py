"""A durable call abandoned past its timeout may still store items after its action has
failed; the key keeps its input counter, so its next input never reuses the ids of the
abandoned call's late write (it would overwrite that row, or be overwritten by it). On
the public harness in ``ignore`` mode, Mem0 on the embedded store."""

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.testing import AgentHarness
from runtime import embedded_rows

JOB = "abandoned-ids"


class AddInACallAgent(Agent):
    """Input ``(key, n, text)``: adds ``text`` in a durable call; outputs ``(n, ids)``."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def note(event, ctx):
        _, n, text = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        ids = await ctx.durable_execute_async(notes.add, text)
        ctx.send_event(OutputEvent((n, ids)))


def rows(tmp_path):
    return embedded_rows.rows(JOB, tmp_path)


def test_a_call_that_stores_after_its_timeout_keeps_the_keys_next_input_apart(tmp_path):
    harness = AgentHarness(AddInACallAgent(), config={
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path),
        "agents.job-id": JOB,
        "agents.error-handling": "ignore",
        "agents.durable-async.timeout-ms": 1000,
    })
    try:
        harness.process_element(("k", 0, "late write"))
        [abandoned] = harness.pool.pending()
        harness.advance(2.0)  # past its timeout: the action fails, its run is dropped
        assert harness.stats.durable_calls_timed_out == 1 and harness.outputs == []

        harness.process_element(("k", 1, "second input"))
        [_, second] = harness.pool.pending()
        harness.pool.run(second)
        harness.advance(0.005)
        harness.pool.run(abandoned)  # its thread returns at last: the late write lands
        harness.advance(0.005)

        [(n, second_ids)] = harness.outputs
        stored = rows(tmp_path)
        assert n == 1
        assert sorted(stored.values()) == ["late write", "second input"]
        assert stored[second_ids[0]] == "second input"
        assert harness.state_of("k", "next_seq") == 2
    finally:
        harness.close()
