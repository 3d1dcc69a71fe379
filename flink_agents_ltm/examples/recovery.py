"""Recovery: a job fails halfway, Flink restarts it, nothing is counted or remembered twice.

Four customers send ten messages each. For each message the agent raises the
customer's counter in short-term memory (Flink keyed state) and remembers the
message in long-term memory (Mem0). The job takes a checkpoint every 200 ms.
Carol's sixth message fails on purpose, once, right after it was remembered:
Flink restarts the job from its last completed checkpoint and replays every
input since, carol's sixth message included, so those messages are handled a
second time. At the end each customer's agent reads its long-term memory back.

    python -m flink_agents_ltm.examples.recovery [--home DIR]

The run checks its own claims and exits with 1 if one does not hold: the
failure happened, each customer's counter took the values 1 to 10 once each,
and each message is in long-term memory exactly once.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile
from collections import Counter, defaultdict
from functools import partial

from pyflink.common import Configuration, Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.options import LongTermMemoryOptions

CUSTOMERS = ("alice", "bob", "carol", "dave")
MESSAGES_EACH = 10
FAILING = ("carol", 6)  # this customer's n-th message fails once
MEMORY_SET = "history"


class InjectedFailure(RuntimeError):
    """The failure this example causes on purpose."""


def message_for(work_dir: str, n: int) -> dict:
    """Input ``n`` of the stream: the customers' messages in turn, then one read-back
    request per customer."""
    total = len(CUSTOMERS) * MESSAGES_EACH
    customer = CUSTOMERS[n % len(CUSTOMERS)]
    if n >= total:
        return {"customer": customer, "read_back": True}
    number = n // len(CUSTOMERS) + 1
    return {"customer": customer, "read_back": False, "number": number,
            "text": f"{customer}'s message {number}: please check order {1000 + n}",
            "work_dir": work_dir if (customer, number) == FAILING else None}


def completed_checkpoints(work_dir: str) -> int:
    found = glob.glob(os.path.join(work_dir, "checkpoints", "*", "chk-*", "_metadata"))
    return max((int(p.split("chk-")[1].split(os.sep)[0]) for p in found), default=0)


class RememberingAgent(Agent):
    @action(InputEvent)
    async def handle(event, ctx):
        message = event.input
        history = ctx.long_term_memory.get_memory_set(MEMORY_SET)
        if message["read_back"]:
            items = await ctx.durable_execute_async(history.get)
            ctx.send_event(OutputEvent(("memory", ctx.key, [item.value for item in items])))
            return
        count = (ctx.short_term_memory.get("messages") or 0) + 1
        ctx.short_term_memory.set("messages", count)
        await ctx.durable_execute_async(history.add, message["text"])
        work_dir = message["work_dir"]  # set on the message that fails once
        if work_dir is not None and not os.path.exists(os.path.join(work_dir, "failed-once")):
            with open(os.path.join(work_dir, "failed-once"), "w") as marker:
                marker.write(str(completed_checkpoints(work_dir)))
            raise InjectedFailure(f"{ctx.key}'s message {message['number']} fails on purpose, "
                                  "after remembering it")
        ctx.send_event(OutputEvent(("counted", ctx.key, count, message["number"])))


def build_environment(work_dir: str) -> StreamExecutionEnvironment:
    config = Configuration()
    for key, value in {
        "python.execution-mode": "thread",
        "execution.checkpointing.interval": "200 ms",
        "execution.checkpointing.dir": f"file://{os.path.join(work_dir, 'checkpoints')}",
        # unaligned: checkpoints complete while an action holds back the input
        "execution.checkpointing.unaligned.enabled": "true",
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "500 ms",
        "parallelism.default": "1",
    }.items():
        config.set_string(key, value)
    return StreamExecutionEnvironment.get_execution_environment(config)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="folder for checkpoints and the embedded store "
                        "(default: a temp dir removed at the end)")
    args = parser.parse_args(argv)
    if args.home:
        return run(args.home)
    with tempfile.TemporaryDirectory(prefix="flink-agents-ltm-recovery-") as home:
        return run(home)


def run(home: str) -> int:
    total = len(CUSTOMERS) * MESSAGES_EACH
    print(f"recovery example: {total} messages from {len(CUSTOMERS)} customers, a checkpoint "
          f"every 200 ms, {FAILING[0]}'s message {FAILING[1]} fails once on purpose", flush=True)
    env = build_environment(home)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "recovery-example")
    agents_env.get_config().set(LongTermMemoryOptions.BASE_DIR, home)
    numbers = env.from_source(NumberSequenceSource(0, total + len(CUSTOMERS) - 1),
                              WatermarkStrategy.no_watermarks(), "messages")
    messages = numbers.map(partial(message_for, home), output_type=Types.PICKLED_BYTE_ARRAY())
    outputs = (agents_env.from_datastream(messages, key_selector=lambda m: m["customer"])
               .apply(RememberingAgent()).to_datastream())
    counts: dict[str, list[int]] = defaultdict(list)
    memories: dict[str, list[str]] = {}
    with outputs.execute_and_collect("recovery-example") as results:
        for kind, customer, *rest in results:
            if kind == "counted":
                counts[customer].append(rest[0])
            else:
                memories[customer] = rest[0]
    return report(home, counts, memories)


def report(home: str, counts: dict[str, list[int]], memories: dict[str, list[str]]) -> int:
    marker = os.path.join(home, "failed-once")
    failed = os.path.exists(marker)
    if failed:
        with open(marker) as text:
            last = int(text.read() or 0)
        since = f"checkpoint {last}" if last else "the start (no checkpoint had completed)"
        print(f"the job failed once on purpose ({FAILING[0]}'s message {FAILING[1]}); Flink "
              f"restarted it from {since} and replayed the messages since")
    else:
        print("NO failure happened: nothing was recovered")
    expected = list(range(1, MESSAGES_EACH + 1))
    exact = all(sorted(counts[c]) == expected for c in CUSTOMERS)
    print("short-term counters: " + ", ".join(
        f"{c} {','.join(map(str, sorted(counts[c])))}" for c in CUSTOMERS))
    print(f"  each message counted exactly once: {'yes' if exact else 'NO'}")
    stored = sum(len(memories.get(c, [])) for c in CUSTOMERS)
    duplicates = {c: sorted(v for v, n in Counter(memories.get(c, [])).items() if n > 1)
                  for c in CUSTOMERS}
    missing = {c: MESSAGES_EACH - len(set(memories.get(c, []))) for c in CUSTOMERS}
    total = len(CUSTOMERS) * MESSAGES_EACH
    print(f"long-term memory: {stored} items for {total} messages, "
          f"{sum(len(d) for d in duplicates.values())} stored twice or more, "
          f"{sum(missing.values())} missing")
    twice = [f"[{c}] {value}" for c, values in duplicates.items() for value in values]
    for line in twice[:5]:
        print(f"  stored twice or more: {line}")
    if len(twice) > 5:
        print(f"  ... and {len(twice) - 5} more")
    once = stored == total and not any(missing.values())
    print(f"  each message remembered exactly once: {'yes' if once else 'NO'}")
    return 0 if failed and exact and once else 1


if __name__ == "__main__":
    sys.exit(main())
