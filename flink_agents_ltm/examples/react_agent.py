"""A ReAct agent, offline: a prompt, a tool, an output schema and long-term memory.

Support messages are triaged by the built-in :class:`ReActAgent`: each record
fills a declared prompt (``{shop}`` and ``{message}``), the chat model calls the
``order_status`` tool, and the answer is validated into a ``Triage``. The chat
model is :class:`ScriptedChatModelSetup`, so no API key is needed: its script
looks up the order named in the message, then answers JSON from the tool's
result; for a message with ``!`` its first answer leaves out ``urgent``, so you
see the answer sent back with what was wrong and the corrected one used. With
``memory=True`` the agent recalls what the customer said before (the long-term
memory here is the in-process ``in-memory`` one) and the script mentions it.
Swap the model for ``OpenAIChatModelSetup`` to talk to a real one (the prompt
and the schema stay).

    python -m flink_agents_ltm.examples.react_agent

The last line checks what the run shows; the exit code says so too.
"""

from __future__ import annotations

import json
import re
import sys

from pydantic import BaseModel
from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agents.react_agent import ReActAgent
from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole, tool
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.prompts import Prompt
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup

ORDERS = {"7": "shipped", "12": "lost", "31": "delivered"}
MESSAGES = [
    {"customer": "alice", "message": "Where is order 7?"},
    {"customer": "bob", "message": "Order 12 never came!"},
    {"customer": "alice", "message": "And order 31?"},
]
EXPECTED = [("alice", "7", "shipped", False, False), ("bob", "12", "lost", True, False),
            ("alice", "31", "delivered", False, True)]

TRIAGE = Prompt.from_messages([
    ChatMessage("system", "You triage the support messages of {shop}. Look the order up."),
    ChatMessage("user", "{message}"),
])


class Triage(BaseModel):
    order_id: str
    status: str
    urgent: bool
    returning: bool


@tool
def order_status(order_id: str) -> str:
    """The shipping status of an order."""
    return ORDERS.get(order_id, "unknown order")


def triage_script(messages, tools):
    """The scripted model: look the order up, then answer as JSON (the first answer to a
    message with '!' lacks 'urgent', to show a correction)."""
    asked = next(m.content for m in reversed(messages) if m.role is MessageRole.USER
                 and not m.content.startswith("Your answer does not fit"))
    results = [m.content for m in messages if m.role is MessageRole.TOOL]
    order = re.search(r"[Oo]rder (\d+)", asked)
    if not results:
        return {"tool_calls": [{"name": "order_status",
                                "arguments": {"order_id": order.group(1) if order else ""}}]}
    answer = {"order_id": order.group(1) if order else "", "status": results[0],
              "urgent": "!" in asked,
              "returning": any("What you remember" in m.content for m in messages
                               if m.role is MessageRole.SYSTEM)}
    corrected = messages[-1].content.startswith("Your answer does not fit")
    if "!" in asked and not corrected:
        del answer["urgent"]
    return json.dumps(answer)


def main(argv: list[str] | None = None) -> int:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "react-agent-example")
    agents_env.get_config().set(AgentsOptions.LONG_TERM_MEMORY_FACTORY, "in-memory")
    agents_env.add_resource("triage", ResourceType.PROMPT, TRIAGE)
    agent = ReActAgent(
        chat_model=ResourceDescriptor(ScriptedChatModelSetup, respond=triage_script),
        prompt="triage", output_schema=Triage, tools=[order_status], memory=True)
    records = env.from_collection([{**m, "shop": "Acme"} for m in MESSAGES])
    outputs = (agents_env.from_datastream(records, key_selector=lambda r: r["customer"])
               .apply(agent).to_datastream())
    seen = []
    with outputs.execute_and_collect("react-agent-example") as results:
        for triage in results:
            customer = "bob" if triage.order_id == "12" else "alice"
            seen.append((customer, triage.order_id, triage.status, triage.urgent,
                         triage.returning))
            print(f"[{customer}] {triage!r}")
    ok = sorted(seen) == sorted(EXPECTED)
    print(f"\n{len(seen)} of {len(MESSAGES)} messages triaged from the tool's result, the "
          f"returning customer recognized: {'as expected' if ok else 'NOT as expected'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
