"""The support-chat example: ctx.chat with tools on the scripted model, and memory events."""

import pytest

from tests.job_runner import failure, run_python

pytestmark = pytest.mark.cluster


def test_every_question_is_answered_from_both_tools_and_raises_one_memory_event(user_dirs):
    cwd, scratch, home = user_dirs
    result = run_python(["-m", "flink_agents_ltm.examples.support_chat", "--home", str(home)],
                        cwd, scratch, home)
    assert result.returncode == 0, failure(result)
    lines = result.stdout.splitlines()
    answers = [line.strip() for line in lines if line.strip().startswith("A: ")]
    assert sorted(answers) == sorted([
        'A: Your order is shipped, arrives Friday (context: {"customer": "alice", '
        '"questions": 1})',
        'A: Your order is being packed (context: {"customer": "bob", "questions": 1})',
        'A: Your order is delivered Monday (context: {"customer": "alice", "questions": 2})',
    ])
    events = [line for line in lines if "memory event:" in line]
    assert sorted(events) == sorted([
        "[alice] memory event: add 1 item(s) to set 'questions'",
        "[alice] memory event: add 1 item(s) to set 'questions'",
        "[bob] memory event: add 1 item(s) to set 'questions'",
    ])
    assert lines[-1] == ("3 of 3 questions answered from both tools' results, "
                         "3 memory event(s): as expected")
