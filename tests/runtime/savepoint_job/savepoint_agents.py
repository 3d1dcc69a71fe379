"""The agent of the savepoint fixture (``tests/runtime/fixtures/savepoint-8a78e2d``): it must
stay importable under this name and keep its behaviour, since the fixture's state holds its
runs. Its folder comes from ``SAVEPOINT_JOB_DIR`` (not from the inputs, which the state
holds with the paths of the machine that wrote it)."""

import json
import os
import time

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.api.runner_context import CALL_AGAIN
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding

FOLDER = "SAVEPOINT_JOB_DIR"


def _log(name, key, n):
    fd = os.open(os.path.join(os.environ[FOLDER], "calls.log"),
                 os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a") as log:
        log.write(f"{name} {key} {n} {os.getpid()}\n")


def charge(key, n, hold_s):
    """The side effect of an input: one ``charge`` line in ``calls.log``; then it holds."""
    _log("charge", key, n)
    time.sleep(hold_s)
    return n


def charged(key, n):
    """``charge``'s reconciler: did the charge of (key, n) happen?"""
    try:
        with open(os.path.join(os.environ[FOLDER], "calls.log")) as log:
            done = any(line.startswith(f"charge {key} {n} ") for line in log)
    except FileNotFoundError:
        done = False
    return n if done else CALL_AGAIN


def remember(events, key, n):
    [item_id] = events.add(f"{key} event {n}")
    return item_id


class SavepointAgent(Agent):
    """Counts its key's inputs (short-term memory), charges each once, remembers each;
    outputs ``{"key", "n", "count", "id"}`` as JSON."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def count(event, ctx):
        key, n, hold_s = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        await ctx.durable_execute_async(charge, key, n, hold_s,
                                        reconciler=lambda: charged(key, n))
        events = ctx.long_term_memory.get_memory_set("events")
        item_id = await ctx.durable_execute_async(remember, events, key, n)
        ctx.send_event(OutputEvent(json.dumps({"key": key, "n": n, "count": count,
                                               "id": item_id})))
