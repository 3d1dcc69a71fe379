"""The ReAct-agent example: a prompt, a tool, an output schema and memory on the scripted
model, run as a user runs it."""

import pytest

from tests.job_runner import failure, run_python

pytestmark = pytest.mark.cluster


def test_every_message_is_triaged_from_the_tool_and_the_returning_customer_recognized(
        user_dirs):
    cwd, scratch, home = user_dirs
    result = run_python(["-m", "flink_agents_ltm.examples.react_agent"], cwd, scratch, home)
    assert result.returncode == 0, failure(result)
    lines = result.stdout.splitlines()
    assert sorted(line for line in lines if line.startswith("[")) == sorted([
        "[alice] Triage(order_id='7', status='shipped', urgent=False, returning=False)",
        "[bob] Triage(order_id='12', status='lost', urgent=True, returning=False)",
        "[alice] Triage(order_id='31', status='delivered', urgent=False, returning=True)",
    ])
    assert lines[-1] == ("3 of 3 messages triaged from the tool's result, the returning "
                         "customer recognized: as expected")
