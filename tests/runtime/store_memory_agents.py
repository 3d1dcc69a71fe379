"""The agent of the job whose long-term memory lives in a declared vector store (a module
of its own: jobs pickle agents by reference, and the embedded interpreter imports them by
this name)."""

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding


class StoredNotesAgent(Agent):
    """Input ``(key, n, text)``: remembers ``text`` with ``{"n": n}``, then answers with what
    a search of the key's notes from ``n - 1`` on finds (on a worker thread) and how many
    documents the store holds (read through the store resource itself)."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def remember(event, ctx):
        key, n, text = event.input
        notes = ctx.long_term_memory.get_memory_set("notes")
        notes.add(text, {"n": n})
        found = await ctx.durable_execute_async(notes.search, "drinks tea coffee", limit=10,
                                                filters={"n": {"gte": n - 1}})
        store = ctx.get_resource("memories", "vector_store")
        ctx.send_event(OutputEvent((key, n, sorted(i.value for i in found), store.size())))
