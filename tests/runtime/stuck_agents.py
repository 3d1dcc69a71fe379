"""An agent whose durable calls outlive their timeout (a module of its own: jobs pickle
agents by reference, and the embedded interpreter imports them by this name)."""

import time

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent


def outlive_the_timeout(seconds):
    """Returns on its own, long after the call's timeout: its thread is abandoned."""
    time.sleep(seconds)
    return seconds


class StuckCallsAgent(Agent):
    """Input ``(key, seconds)``: one durable call that takes ``seconds``."""

    @action(InputEvent)
    async def call(event, ctx):
        key, seconds = event.input
        ctx.send_event(OutputEvent((key, await ctx.durable_execute_async(
            outlive_the_timeout, seconds))))
