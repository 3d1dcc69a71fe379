"""An agent whose durable calls hang (a module of its own: jobs pickle agents by reference,
and the embedded interpreter imports them by this name)."""

import os
import time

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent


def hang(key, folder, seconds):
    """Leaves ``<folder>/started-<key>`` (its start, seen from outside), then sleeps."""
    path = os.path.join(folder, f"started-{key}")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as marker:
        marker.write(str(os.getpid()))
    time.sleep(seconds)
    return key


class HangingCallsAgent(Agent):
    """Input ``(key, folder, seconds)``: one durable call that hangs ``seconds``."""

    @action(InputEvent)
    async def call(event, ctx):
        key, folder, seconds = event.input
        ctx.send_event(OutputEvent(await ctx.durable_execute_async(hang, key, folder, seconds)))
