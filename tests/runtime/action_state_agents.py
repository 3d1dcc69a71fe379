"""The agent of the action-state store's cluster test (importable by Flink's workers)."""

import os

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.runner_context import CALL_AGAIN
from runtime.agents_for_tests import fail_once_after_two_checkpoints, log_call


def logged(log_dir, key, n):
    """The reconciler's check: did the call with (key, n) write its line?"""
    path = os.path.join(log_dir, "calls.log")
    if not os.path.exists(path):
        return CALL_AGAIN
    with open(path) as log:
        return n if f"{key} {n}\n" in set(log) else CALL_AGAIN


class ReconcilingCountingAgent(Agent):
    """:class:`~runtime.agents_for_tests.CountingAgent` whose call has a reconciler: a call
    that the failure interrupted after it wrote its line is not run again."""

    @action(InputEvent)
    async def count(event, ctx):
        key, n, work_dir, is_trigger = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        await ctx.durable_execute_async(log_call, work_dir, key, n,
                                        reconciler=lambda: logged(work_dir, key, n))
        if is_trigger:
            await fail_once_after_two_checkpoints(ctx, work_dir)
        ctx.send_event(OutputEvent((key, n, count)))
