"""MCP tools and prompts in an agent, offline: python -m flink_agents_ltm.examples.mcp_orders

Each customer asks about an order. The agent takes the order server's prompt
(``order_reply``) and lets the chat model answer with the server's tools: the
model calls ``lookup_order`` and quotes it. The order server is an MCP server
(:mod:`flink_agents_ltm.examples.orders_mcp_server`) that the ``orders``
resource starts over stdio; ``--endpoint http://127.0.0.1:8765/mcp`` uses one
already serving HTTP instead. The model is the scripted one (no API key, no
network); ``--openai-base-url URL --model NAME`` uses an OpenAI-compatible
endpoint (the key from ``OPENAI_API_KEY``). Each tool call is a durable call:
recorded in Flink state, not made again when the job recovers.

Needs the ``mcp`` extra: ``pip install 'flink-agents-ltm[mcp]'``.
"""

import argparse
import os
import re
import sys

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.resources import (
    ResourceDescriptor,
    ResourceType,
    chat_model_setup,
    mcp_server,
)


def answer(messages, tools):
    """The scripted model: look the order up, then quote what the tool found."""
    last = messages[-1]
    if last.role == "tool":
        return f"Order {last.content}"
    order = re.search(r"order (\S+?)[;.?]", messages[0].content).group(1)
    return {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": order}}]}


class OrderAgent(Agent):
    @mcp_server
    @staticmethod
    def orders():
        endpoint = os.environ.get("ORDERS_MCP_ENDPOINT")
        if endpoint:
            return ResourceDescriptor("flink_agents_ltm.integrations.mcp.MCPServer",
                                      endpoint=endpoint, bearer_token_env="ORDERS_MCP_TOKEN")
        count = os.environ.get("ORDERS_MCP_COUNT_FILE")
        return ResourceDescriptor(
            "flink_agents_ltm.integrations.mcp.MCPServer", command=sys.executable,
            args=["-m", "flink_agents_ltm.examples.orders_mcp_server",
                  *(["--count-file", count] if count else [])])

    @chat_model_setup
    @staticmethod
    def assistant():
        base_url = os.environ.get("ORDERS_OPENAI_BASE_URL")
        if base_url:
            return ResourceDescriptor("flink_agents_ltm.integrations.chat_models.openai."
                                      "OpenAIChatModelSetup", base_url=base_url,
                                      model=os.environ["ORDERS_OPENAI_MODEL"])
        return ResourceDescriptor("flink_agents_ltm.integrations.chat_models.scripted."
                                  "ScriptedChatModelSetup", respond=answer)

    @action(InputEvent)
    async def reply(event, ctx):
        orders = ctx.get_resource("orders", ResourceType.MCP_SERVER)
        prompt = orders.prompt("order_reply", tone="friendly")
        messages = prompt.format_messages(order_id=event.input["order"])
        reply = await ctx.chat(messages, model="assistant", tools=orders.tools(["lookup_order"]))
        ctx.send_event(OutputEvent({"customer": ctx.key, "reply": reply.content}))


QUESTIONS = [
    {"customer": "alice", "order": "A-1001"},
    {"customer": "bob", "order": "A-1002"},
    {"customer": "carol", "order": "A-1003"},
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", help="an order server serving streamable HTTP")
    parser.add_argument("--openai-base-url", help="an OpenAI-compatible endpoint")
    parser.add_argument("--model", help="the model of --openai-base-url")
    args = parser.parse_args()
    if args.endpoint:
        os.environ["ORDERS_MCP_ENDPOINT"] = args.endpoint
    if args.openai_base_url:
        if not args.model:
            parser.error("--openai-base-url needs --model")
        os.environ["ORDERS_OPENAI_BASE_URL"] = args.openai_base_url
        os.environ["ORDERS_OPENAI_MODEL"] = args.model

    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.execution_environment import (
        AgentsExecutionEnvironment,
        AgentsOptions,
    )

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "mcp-orders")
    questions = env.from_collection(QUESTIONS)
    replies = (agents_env.from_datastream(questions, key_selector=lambda q: q["customer"])
               .apply(OrderAgent()).to_datastream())
    with replies.execute_and_collect("mcp-orders") as results:
        for reply in results:
            print(reply)


if __name__ == "__main__":
    main()
