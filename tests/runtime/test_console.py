"""What a user sees on the console of a local job (a fresh Python process running the job,
nothing configured): the operator's INFO lines in both execution modes, and a failure's
one-line error as the last line, once, with no Python or Java trace on the console."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.cluster

JOB = Path(__file__).with_name("console_job.py")


@pytest.fixture(scope="module", params=["thread", "process"])
def console(request):
    """``(mode, exit code, standard output and error interleaved as a terminal shows
    them)`` of the two jobs of console_job.py."""
    return (request.param, *console_of(request.param))


def console_of(mode):
    with tempfile.TemporaryDirectory(prefix="flink-agents-ltm-console-") as scratch:
        env = dict(os.environ, JVM_ARGS=f"-Djava.io.tmpdir={scratch}", FLINK_LOG_DIR=scratch,
                   TMPDIR=scratch)
        job = subprocess.run([sys.executable, str(JOB), mode], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=300)
    return job.returncode, job.stdout


def test_the_console_shows_the_operator_opening_its_progress_and_its_totals(console):
    mode, _, output = console
    lines = [line for line in output.splitlines()
             if " INFO flink_agents_ltm.runtime.agent_operator: agent SleepyAgent " in line]
    assert f"agent SleepyAgent opened on subtask 0 of 1 ({mode} mode)" in lines[0]
    assert "agent SleepyAgent closed on subtask 0: 9 input(s); actions 9 started, 9 completed" \
        in lines[-1]
    progress = [line for line in lines[1:-1] if "agent SleepyAgent on subtask 0: " in line]
    assert progress and all("input(s) (" in line and "durable calls" in line
                            for line in progress)
    assert "RESULTS 9" in output


def test_a_failing_job_ends_the_console_with_its_error_once_and_no_trace(console):
    _, returncode, output = console
    assert returncode != 0
    message = ("action 'handle' of agent BadInputAgent failed for key 'k' (input #0: "
               "('k', 0, 'raise'), InputEvent): ValueError: this input is malformed")
    assert output.splitlines()[-1] == f"AgentActionError: {message}"
    assert output.count(message) == 1
    assert "ERROR flink_agents_ltm.runtime.agent_operator: an action failed with " \
        "AgentActionError: the job fails (the client's last line says why)" in output
    assert "The job failed; its full trace (Python and Java) is in " in output
    assert "Traceback" not in output and "Py4JJavaError" not in output
