"""Agents of the keyed-memory cluster tests (a module of its own: jobs pickle agents by
reference, and the embedded interpreter imports them by this name)."""

import datetime
import time
from dataclasses import dataclass

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, MemoryUpdateEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding


@dataclass
class Address:
    street: str
    city: str


class RememberingAgent(Agent):
    """Input ``(key, n, pause_s)``: waits, reads what the previous input left in short-term
    memory, then leaves a nested profile of typed values for the next one."""

    @action(InputEvent)
    async def remember(event, ctx):
        _, n, pause_s = event.input
        await ctx.durable_execute_async(time.sleep, pause_s)
        profile = ctx.short_term_memory.get("profile")
        seen = None if profile is None else profile.get_fields()
        profile = ctx.short_term_memory.new_object("profile", overwrite=True)
        profile.set("visits", n)
        profile.set("address", Address("Harbour Street 12", "Kiel"))
        profile.set("last_seen", datetime.date(2026, 11, n + 1))
        profile.set("tags.favourite", ["green tea", b"\x00bytes"])
        ctx.send_event(OutputEvent((n, seen)))


def fail_if(broken: bool) -> None:
    if broken:
        raise ConnectionError("the backend is down")


class ObservedNotesAgent(Agent):
    """Input ``(key, n, broken)``: remembers a note, then awaits a call that fails when
    ``broken``. A listener reports every memory update event it receives."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def note(event, ctx):
        key, n, broken = event.input
        ctx.long_term_memory.get_memory_set("notes").add(f"note {n} of {key}")
        await ctx.durable_execute_async(fail_if, broken)
        ctx.send_event(OutputEvent(("done", key, n)))

    @action(MemoryUpdateEvent)
    def observe(event, ctx):
        ctx.send_event(OutputEvent(("observed", event.observation.key, event.observation.ids)))
