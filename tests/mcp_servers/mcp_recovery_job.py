"""A job for test_mcp_recovery: each input asks about its own order; ctx.chat calls the
example order server's lookup_order over stdio (the server counts each call it executes);
one action fails once on purpose right after its tool call, so Flink restarts the job from
its last checkpoint and replays the inputs since. The action-state store (sqlite) holds the
calls completed after that checkpoint.

    python tests/mcp_servers/mcp_recovery_job.py WORK_DIR

prints one JSON line per output and a last line {"failed_once": ...}."""

import json
import os
import re
import sys

from pyflink.common import Configuration, Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.resources import (
    ResourceDescriptor,
    ResourceType,
    chat_model_setup,
    mcp_server,
)

CUSTOMERS = ("alice", "bob", "carol")
EACH = 4
FAILING = 6  # the input whose action fails once, after its tool call


def question(work_dir, n):
    return {"customer": CUSTOMERS[n % len(CUSTOMERS)], "n": n, "order": f"R-{n}",
            "work_dir": work_dir}


def respond(messages, tools):
    last = messages[-1]
    if last.role == "tool":
        return f"found: {last.content}"
    order = re.search(r"order (\S+)", last.content).group(1)
    return {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": order}}]}


class RecoveringOrderAgent(Agent):
    @mcp_server
    @staticmethod
    def orders():
        return ResourceDescriptor(
            "flink_agents_ltm.integrations.mcp.MCPServer", command=sys.executable,
            args=["-m", "flink_agents_ltm.examples.orders_mcp_server", "--count-file",
                  os.environ["ORDERS_MCP_COUNT_FILE"]])

    @chat_model_setup
    @staticmethod
    def assistant():
        return ResourceDescriptor("flink_agents_ltm.integrations.chat_models.scripted."
                                  "ScriptedChatModelSetup", respond=respond)

    @action(InputEvent)
    async def answer(event, ctx):
        q = event.input
        orders = ctx.get_resource("orders", ResourceType.MCP_SERVER)
        reply = await ctx.chat(f"where is order {q['order']}", model="assistant",
                               tools=orders.tools(["lookup_order"]))
        marker = os.path.join(q["work_dir"], "failed-once")
        if q["n"] == FAILING and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("fails once on purpose, after the tool call")
        ctx.send_event(OutputEvent({"customer": ctx.key, "order": q["order"],
                                    "reply": reply.content}))


def main(work_dir):
    config = Configuration()
    for key, value in {
        "execution.checkpointing.interval": "200 ms",
        "execution.checkpointing.dir": f"file://{os.path.join(work_dir, 'checkpoints')}",
        "execution.checkpointing.unaligned.enabled": "true",
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "500 ms",
        "parallelism.default": "1",
    }.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set_string("agents.job-id", "mcp-recovery")
    agents_env.get_config().set_string("agents.action-state.store", "sqlite")
    agents_env.get_config().set_string("long-term-memory.embedded.base-dir", work_dir)
    total = len(CUSTOMERS) * EACH
    numbers = env.from_source(NumberSequenceSource(0, total - 1),
                              WatermarkStrategy.no_watermarks(), "questions")
    questions = numbers.map(lambda n: question(work_dir, n),
                            output_type=Types.PICKLED_BYTE_ARRAY())
    outputs = (agents_env.from_datastream(questions, key_selector=lambda q: q["customer"])
               .apply(RecoveringOrderAgent()).to_datastream())
    with outputs.execute_and_collect("mcp-recovery") as results:
        for output in results:
            print(json.dumps(output), flush=True)
    print(json.dumps({"failed_once": os.path.exists(os.path.join(work_dir, "failed-once"))}))


if __name__ == "__main__":
    main(sys.argv[1])
