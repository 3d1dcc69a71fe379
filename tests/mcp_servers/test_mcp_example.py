"""The MCP example (``python -m flink_agents_ltm.examples.mcp_orders``) as a user runs it, a
job on PyFlink's local mini-cluster: the MCPServer resource starts the example order server
over stdio in the Python worker, the agent formats the server's prompt and the scripted
model calls the server's tool through ctx.chat. Every question gets one answer quoting its
order, and the server executed each lookup once (its count file)."""

import ast

import pytest

from flink_agents_ltm.examples.mcp_orders import QUESTIONS
from flink_agents_ltm.examples.orders_mcp_server import ORDERS, count_calls
from tests.job_runner import failure, run_python


@pytest.mark.cluster
def test_the_example_answers_each_question_from_the_servers_tool_called_once(user_dirs):
    cwd, scratch, home = user_dirs
    calls = cwd / "calls"
    ran = run_python(["-m", "flink_agents_ltm.examples.mcp_orders"], cwd, scratch, home,
                     ORDERS_MCP_COUNT_FILE=str(calls))
    assert ran.returncode == 0, failure(ran)
    replies = {}
    for line in ran.stdout.splitlines():
        if line.startswith("{"):
            reply = ast.literal_eval(line)
            replies[reply["customer"]] = reply["reply"]
    assert sorted(replies) == sorted(q["customer"] for q in QUESTIONS), failure(ran)
    for question in QUESTIONS:
        order = question["order"]
        assert f'"order_id": "{order}"' in replies[question["customer"]]
        assert f'"status": "{ORDERS[order]["status"]}"' in replies[question["customer"]]
        assert count_calls(calls, order) == 1
    assert count_calls(calls) == len(QUESTIONS)
