"""An agent for tables: each input is a Row of (customer, text); the output counts the
customer's inputs in short-term memory, as a dict of the output table's fields."""

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent


def shout(text):
    return text.upper()


class TableAgent(Agent):
    @action(InputEvent)
    async def answer(event, ctx):
        row = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        loud = await ctx.durable_execute_async(shout, row["text"])
        ctx.send_event(OutputEvent({"customer": row.customer, "n": count, "answer": loud}))
