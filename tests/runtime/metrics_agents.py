"""Agents of the operator-metrics tests (a module of its own: jobs pickle agents by
reference, and the embedded interpreter imports them by this name)."""

import os
import time

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, MemoryUpdateEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from runtime.agents_for_tests import (
    broken_call,
    log_call,
    sleep_then,
    wait_for_two_more_checkpoints,
)


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


class ReplayAgent(Agent):
    """Input ``(key, n, work_dir, is_trigger)``. The trigger input records a durable call,
    waits for two checkpoints, and fails once; after the restart the recorded call is
    replayed and the action then waits for ``<work_dir>/release``. Other inputs make no
    durable call, so every replay comes from the trigger."""

    @action(InputEvent)
    async def handle(event, ctx):
        key, n, work_dir, is_trigger = event.input
        if is_trigger:
            await ctx.durable_execute_async(log_call, work_dir, key, n)
            marker = os.path.join(work_dir, "failed-once")
            if not os.path.exists(marker):
                await ctx.durable_execute_async(wait_for_two_more_checkpoints,
                                                os.path.join(work_dir, "checkpoints"))
                open(marker, "w").close()
                raise RuntimeError("injected failure after a completed checkpoint")
            await ctx.durable_execute_async(wait_for_file, os.path.join(work_dir, "release"))
        ctx.send_event(OutputEvent((key, n)))
