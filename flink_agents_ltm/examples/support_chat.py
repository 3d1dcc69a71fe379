"""A support agent that chats with tools, offline: ``ctx.chat`` on a scripted model.

Each customer question goes through ``ctx.chat`` with two tools: ``order_status``
(a plain tool, run on the worker pool) and ``customer_context`` (a tool that
takes a ``ToolContext`` and reads the asking action's short-term memory,
including the counter it has just raised and not yet persisted). The chat model
is :class:`ScriptedChatModelSetup`: its script asks for both tools, then writes
the answer from their results, so the example runs without an API key. The
question is then remembered in long-term memory, and a second action listens
to the resulting ``MemoryUpdateEvent``. Swap the model for
``OpenAIChatModelSetup`` or ``OllamaChatModelSetup`` to talk to a real one.

    python -m flink_agents_ltm.examples.support_chat [--home DIR]

The last line checks what the run shows (every question answered from the
tools' results, one memory event per question); the exit code says so too.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter

from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole, ToolContext, tool
from flink_agents_ltm.api.events import InputEvent, MemoryUpdateEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.options import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, chat_model_setup
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup

ORDERS = {"7": "shipped, arrives Friday", "12": "being packed", "31": "delivered Monday"}
QUESTIONS = [
    ("alice", "Where is order 7?"),
    ("bob", "Has order 12 left the warehouse?"),
    ("alice", "And order 31, the teapot?"),
]


@tool
def order_status(order_id: str) -> str:
    """The shipping status of an order."""
    return ORDERS.get(order_id, "unknown order")


@tool
def customer_context(ctx: ToolContext) -> dict:
    """How many questions this customer has asked, from the action's short-term memory."""
    return {"customer": ctx.key, "questions": ctx.short_term_memory.get("questions")}


def support_script(messages, tools):
    """The scripted model: first ask for both tools, then answer from their results."""
    if not any(m.role is MessageRole.TOOL for m in messages):
        order = re.search(r"order (\d+)", messages[-1].content)
        return {"tool_calls": [
            {"name": "order_status", "arguments": {"order_id": order.group(1) if order else ""}},
            {"name": "customer_context", "arguments": {}},
        ]}
    results = {m.name: m.content for m in messages if m.role is MessageRole.TOOL}
    return f"Your order is {results['order_status']} (context: {results['customer_context']})"


class SupportChatAgent(Agent):
    @chat_model_setup
    def assistant():
        return ResourceDescriptor(ScriptedChatModelSetup, respond=support_script)

    @action(InputEvent)
    async def answer(event, ctx):
        asked = (ctx.short_term_memory.get("questions") or 0) + 1
        ctx.short_term_memory.set("questions", asked)
        question = event.input["text"]
        reply = await ctx.chat([ChatMessage("user", question)], model="assistant",
                               tools=[order_status, customer_context])
        questions = ctx.long_term_memory.get_memory_set("questions")
        await ctx.durable_execute_async(questions.add, question)
        ctx.send_event(OutputEvent(("answer", ctx.key, question, reply.content)))

    @action(MemoryUpdateEvent)
    def remembered(event, ctx):
        # Runs after `answer` completed; memory events never cause more memory events.
        seen = event.observation
        ctx.send_event(OutputEvent(("memory", ctx.key, f"{seen.op.value} {len(seen.ids)} "
                                                       f"item(s) to set '{seen.set}'")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="folder for the embedded store (default: a temp dir "
                        "removed at the end)")
    args = parser.parse_args(argv)
    if args.home:
        return run(args.home)
    with tempfile.TemporaryDirectory(prefix="flink-agents-ltm-chat-") as home:
        return run(home)


def run(home: str) -> int:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    questions = env.from_collection([{"customer": c, "text": t} for c, t in QUESTIONS])
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "support-chat-example")
    agents_env.get_config().set(LongTermMemoryOptions.BASE_DIR, home)
    outputs = (agents_env.from_datastream(questions, key_selector=lambda q: q["customer"])
               .apply(SupportChatAgent()).to_datastream())
    answers, memory_events, asked = 0, 0, Counter[str]()
    with outputs.execute_and_collect("support-chat-example") as results:
        for kind, customer, *rest in results:
            if kind == "answer":
                question, reply = rest
                asked[customer] += 1
                order = re.search(r"order (\d+)", question)
                # order_status's result, and the counter customer_context read before the
                # action persisted it
                answers += (order is not None and ORDERS[order.group(1)] in reply
                            and f'"questions": {asked[customer]}' in reply)
                print(f"[{customer}] Q: {question}\n        A: {reply}")
            else:
                memory_events += 1
                print(f"[{customer}] memory event: {rest[0]}")
    ok = answers == memory_events == len(QUESTIONS)
    print(f"\n{answers} of {len(QUESTIONS)} questions answered from both tools' results, "
          f"{memory_events} memory event(s): {'as expected' if ok else 'NOT as expected'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
