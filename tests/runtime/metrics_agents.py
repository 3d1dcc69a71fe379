"""Agents of the operator-metrics tests (a module of its own: jobs pickle agents by
reference, and the embedded interpreter imports them by this name)."""

import os
import time

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, MemoryUpdateEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from runtime.agents_for_tests import broken_call, sleep_then


def wait_for_file(path):
    """Runs on a worker until the test has read the metrics and creates ``path``."""
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was not created within 60 s")
        time.sleep(0.01)
    return path


class MetricsAgent(Agent):
    """Input ``(key, n, what, release_file)``; ``what`` picks what the input does."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def handle(event, ctx):
        key, n, what, release_file = event.input
        if what.startswith("sleep "):  # "sleep <seconds>", longer than the timeout or not
            await ctx.durable_execute_async(sleep_then, float(what.split()[1]), n)
        elif what == "fail":
            await ctx.durable_execute_async(broken_call)
        elif what == "memory":
            notes = ctx.long_term_memory.get_memory_set("notes")
            ids = notes.add(f"note {n} of {key}")
            notes.search("note", limit=1)
            notes.get(ids)
            notes.delete(ids)
        elif what == "block":
            await ctx.durable_execute_async(wait_for_file, release_file)
        ctx.send_event(OutputEvent(("done", key, n)))

    @action(MemoryUpdateEvent)
    def observe(event, ctx):
        ctx.send_event(OutputEvent(("observed", ctx.key, event.observation.op.value)))
