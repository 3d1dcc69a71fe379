"""A test session stopped from outside (SIGTERM: a CI runner's timeout, ``.ci/run`` ending
its Flink lanes, ``kill``) tears down what it started, as Ctrl-C does: no server is left
running and no folder left behind (tests/session_servers.py)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.pgvector.server import ROOT

INNER_TEST = '''
import time


def test_holds_the_sessions_pgvector_server(pgvector_session):
    _, folder, _ = pgvector_session
    print("SERVER", folder, flush=True)
    time.sleep(600)
'''


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_session_stopped_with_sigterm_stops_its_pgvector_server_and_removes_its_folder(
        tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.conftest"]\n')
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    inner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "inner-tmp"), str(tmp_path)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        folder = None
        for line in inner.stdout:
            if line.startswith("SERVER "):
                folder = Path(line.split(" ", 1)[1].strip())
                break
        assert folder is not None, "the inner session never started its server"
        server_pid = int((folder / "postgres.pid").read_text().split()[0])
        assert alive(server_pid)

        inner.send_signal(signal.SIGTERM)
        rest = inner.communicate(timeout=120)[0]
    finally:
        if inner.poll() is None:
            inner.kill()
            inner.wait()

    deadline = time.monotonic() + 30
    while alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(server_pid), f"the server (pid {server_pid}) outlived its session: {rest}"
    assert not folder.exists()
    assert "KeyboardInterrupt: stopped by signal 15" in rest
