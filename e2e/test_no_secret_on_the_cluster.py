"""A job on the standalone cluster whose vector store password is wrong (a unique marker):
the store travels in a 0600 file, so the marker reaches no command line while the client
runs and no file of the cluster (client, JobManager and TaskManager logs, its tmp folder)
or of the job's memory folder; the failure names the server, not the password. Flink's
client does log the driver's command line and environment (masking only variables named
like secrets): neither may carry one."""

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from e2e.client_output import ClientOutput
from tests.pgvector.server import ROOT

JOB = str(ROOT / "e2e" / "jobs" / "ltm_agent_job.py")
JOB_FOLDER = str(ROOT / "e2e" / "jobs")

pytestmark = pytest.mark.cluster


def files_mentioning(folder: Path, marker: str) -> list[str]:
    needle = marker.encode()
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_wrong_password_in_a_store_file_reaches_no_command_line_and_no_cluster_file(
        cluster, scratch, tmp_path):
    marker = f"wrong-password-{uuid.uuid4().hex}"
    store = json.loads(json.dumps(cluster.vector_store))
    store["config"]["password"] = marker
    environment_marker = f"environment-{uuid.uuid4().hex}"
    masked_marker = f"masked-{uuid.uuid4().hex}"
    store_file = tmp_path / "store.json"
    store_file.touch(mode=0o600)
    store_file.write_text(json.dumps(store))
    client = cluster.popen(
        cluster.command("-py", JOB, "-pyfs", JOB_FOLDER, "--job-id", "e2e-secret", "--keys", "2",
                        "--notes", "1", "--mode", "process", "--parallelism", "1",
                        "--vector-store-file", str(store_file), "--base-dir", str(scratch)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "LTM_TEST_STORE": environment_marker,
             "LTM_TEST_PASSWORD": masked_marker})
    reading = ClientOutput(client)
    command_lines: set[str] = set()
    deadline = time.monotonic() + 300
    while client.poll() is None and time.monotonic() < deadline:  # sample while it runs
        command_lines.update(subprocess.run(["ps", "-e", "-ww", "-o", "args"],
                                            capture_output=True, text=True,
                                            check=True).stdout.splitlines())
        time.sleep(0.2)
    output, _ = reading.finish(timeout=60)

    assert client.returncode != 0
    assert f"cannot connect to the pgvector store at 127.0.0.1:{store['config']['port']}" in \
        output
    assert "password authentication failed" in output
    assert marker not in output
    assert any("--vector-store-file" in line for line in command_lines), (  # ps saw the client
        len(command_lines), cluster.summary(output, returncode=client.returncode))
    assert not [line for line in command_lines if marker in line]
    logs = cluster.folder / "log"
    assert files_mentioning(logs, "password authentication failed")  # the failure is logged
    # Why the store must come from a file: Flink's client logs the Python driver's command
    # line and its environment, masking only variables whose name says secret.
    [client_log] = logs.glob("flink-*-client-*.log")
    assert f"--vector-store-file {store_file}" in client_log.read_text()
    assert environment_marker in client_log.read_text()
    assert masked_marker not in client_log.read_text()
    assert files_mentioning(cluster.folder, marker) == []
    assert files_mentioning(scratch, marker) == []
