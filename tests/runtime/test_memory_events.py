"""Memory events, on the in-memory harness with real Mem0 (in-memory Qdrant): a completed
action's add, get and search become MemoryUpdateEvent, MemoryReadEvent and
MemorySearchEvent; the actions listening to them run suppressed, so their own memory
operations (on the mailbox thread or in a durable call) raise no further events."""

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import (
    InputEvent,
    MemoryReadEvent,
    MemorySearchEvent,
    MemoryUpdateEvent,
    OutputEvent,
)
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.testing import AgentHarness


class MemoryUser(Agent):
    """Input ``(key, text)``: adds the text to ``notes``, reads the set and searches it (in
    a durable call). Each listener reports the event it got; the listener of updates to
    ``notes`` uses memory itself: it adds to ``echoes``, reads and searches it."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def use(event, ctx):
        _, text = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        notes.add(text)
        notes.get()
        await ctx.durable_execute_async(notes.search, text)
        ctx.send_event(OutputEvent(("used", ctx.key)))

    @action(MemoryUpdateEvent)
    async def on_update(event, ctx):
        observation = event.observation
        ctx.send_event(OutputEvent(("update", observation.set, observation.op.value)))
        if observation.set == "notes":  # never for "echoes": a cascade stays finite
            echoes = ctx.long_term_memory.get_memory_set("echoes")
            echoes.add(f"echo of {observation.ids[0]}")
            echoes.get()
            await ctx.durable_execute_async(echoes.search, "echo")

    @action(MemoryReadEvent)
    def on_read(event, ctx):
        ctx.send_event(OutputEvent(("read", event.observation.set, len(event.observation.ids))))

    @action(MemorySearchEvent)
    def on_search(event, ctx):
        ctx.send_event(OutputEvent(("search", event.observation.set, event.observation.query)))


def run(tmp_path):
    harness = AgentHarness(MemoryUser(), run_on_wait=True, config={
        "agents.job-id": f"events-{tmp_path.name}",
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
        LongTermMemoryOptions.VECTOR_STORE.key: {
            "provider": "qdrant", "config": {"collection_name": "events", "path": ":memory:"}},
        LongTermMemoryOptions.BASE_DIR.key: str(tmp_path)})
    harness.process_element(("k", "green tea"))
    harness.end_input()
    return harness


def test_an_actions_add_get_and_search_become_update_read_and_search_events(tmp_path):
    harness = run(tmp_path)
    assert harness.outputs[:4] == [("used", "k"), ("update", "notes", "add"),
                                   ("read", "notes", 1), ("search", "notes", "green tea")]


def test_memory_operations_of_listeners_of_memory_events_raise_no_further_events(tmp_path):
    harness = run(tmp_path)
    assert harness.outputs == [("used", "k"), ("update", "notes", "add"),
                               ("read", "notes", 1), ("search", "notes", "green tea")]
    assert harness.stats.memory_events_emitted == 3
    memory = harness.memory.get()  # the listener's operations did run, unobserved
    memory.switch_context("k")
    assert [item.value for item in memory.get_memory_set("echoes").get()] == [
        f"echo of {memory.get_memory_set('notes').get()[0].id}"]
