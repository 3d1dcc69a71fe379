"""The agent of the state-format tests (a module of its own: the fixture of
``test_state_format.py`` holds a pickled :class:`Noted` event, which loads by this name)."""

from dataclasses import dataclass

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding


@dataclass
class Noted(Event):
    n: int
    text: str


def echo(value):
    return value


class NotesAgent(Agent):
    """Input ``(key, n, text)``, two steps. ``take`` keeps the text in sensory and
    short-term memory, outputs ``("taken", n, previous text)`` and sends :class:`Noted`;
    ``store`` adds the text to long-term memory in a durable call, awaits an echo of ``n``
    and outputs ``("stored", n, ids, sensory text, short-term text)``."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    def take(event, ctx):
        _, n, text = event.input
        ctx.sensory_memory.set("text", text)
        ctx.send_event(OutputEvent(("taken", n, ctx.short_term_memory.get("last"))))
        ctx.short_term_memory.set("last", text)
        ctx.send_event(Noted(n, text))

    @action(Noted)
    async def store(event, ctx):
        notes = ctx.long_term_memory.get_memory_set("notes")
        ids = await ctx.durable_execute_async(notes.add, event.text)
        echoed = await ctx.durable_execute_async(echo, event.n)
        ctx.send_event(OutputEvent(("stored", echoed, ids, ctx.sensory_memory.get("text"),
                                    ctx.short_term_memory.get("last"))))
