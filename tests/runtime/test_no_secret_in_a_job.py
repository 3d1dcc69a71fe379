"""A job whose vector store password is wrong (a unique marker) runs on PyFlink's
mini-cluster and fails: the marker shows up in no exception text, no file of Flink's log
folder or of the job's memory folder, and no command line while the job runs."""

from __future__ import annotations

import copy
import os
import subprocess
import threading
import time
import traceback
import uuid
from pathlib import Path

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from runtime.secret_agents import AnnounceThenRememberAgent

pytestmark = pytest.mark.cluster


def files_mentioning(folder: Path, marker: str) -> list[str]:
    needle = marker.encode()
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def wait_for(path: Path, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_a_wrong_password_reaches_no_exception_log_file_or_command_line(
        flink_env, pgvector_session, tmp_path):
    marker = f"wrong-password-{uuid.uuid4().hex}"
    store = copy.deepcopy(pgvector_session[0])
    store["config"]["password"] = marker
    port = store["config"]["port"]
    memory_dir, signals = tmp_path / "ltm", tmp_path / "signals"
    signals.mkdir()

    env = flink_env(**{"restart-strategy.type": "none"})
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    config.set(AgentsOptions.JOB_ID, "secret-job")
    config.set(LongTermMemoryOptions.VECTOR_STORE, store)
    config.set(LongTermMemoryOptions.BASE_DIR, str(memory_dir))
    # The store is reached at the first memory use, mid-run, while ps looks at the processes.
    config.set(AgentsOptions.LONG_TERM_MEMORY_OPEN_AT_START, False)
    stream = env.from_collection([("k", str(signals))],
                                 type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(
        AnnounceThenRememberAgent()).to_datastream()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            list(out.execute_and_collect("secret-job"))
        except BaseException as error:  # noqa: BLE001 - the job must fail; kept for the test
            failure.append(error)

    job = threading.Thread(target=run)
    job.start()
    wait_for(signals / "running")
    command_lines = subprocess.run(["ps", "-e", "-ww", "-o", "args"], capture_output=True,
                                   text=True, check=True).stdout
    (signals / "go").touch()
    job.join(300)

    assert not job.is_alive()
    assert "ps" in command_lines and len(command_lines.splitlines()) > 3  # ps saw processes
    assert marker not in command_lines
    assert len(failure) == 1  # the job failed, because of the password
    text = "".join(traceback.format_exception(failure[0]))
    assert f"cannot connect to the pgvector store at 127.0.0.1:{port}/mem0" in text
    assert "password authentication failed" in text
    assert marker not in text
    log_dir = Path(os.environ["FLINK_LOG_DIR"])
    assert files_mentioning(log_dir, "password authentication failed")  # the failure is logged
    assert files_mentioning(log_dir, marker) == []
    assert files_mentioning(memory_dir, marker) == []
