"""MCP tool calls survive a failure on PyFlink's local mini-cluster: a job whose actions call
the example order server's tool through ctx.chat fails once right after one tool call and
restarts from its last checkpoint; with the action-state store on, every input gets one
answer and the server executed every lookup once (0 tool calls executed twice, counted by
the server)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.job_runner import failure, run_python

JOB = Path(__file__).with_name("mcp_recovery_job.py")


@pytest.mark.cluster
def test_a_job_restarted_after_a_tool_call_executes_no_tool_call_twice(user_dirs):
    from tests.mcp_servers.mcp_recovery_job import CUSTOMERS, EACH

    cwd, scratch, home = user_dirs
    calls = cwd / "calls"
    ran = run_python([str(JOB), str(cwd)], cwd, scratch, home,
                     ORDERS_MCP_COUNT_FILE=str(calls))
    assert ran.returncode == 0, failure(ran)
    lines = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    assert lines[-1] == {"failed_once": True}, failure(ran)
    outputs = lines[:-1]
    orders = [f"R-{n}" for n in range(len(CUSTOMERS) * EACH)]
    assert sorted(o["order"] for o in outputs) == sorted(orders), failure(ran)
    for output in outputs:
        assert f'"order_id": "{output["order"]}"' in output["reply"]
    executed = Counter(calls.read_text().split())
    assert executed == Counter(orders), executed  # each once: none twice, none missing
