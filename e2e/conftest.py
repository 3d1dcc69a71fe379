"""One pgvector server and one standalone Flink cluster (a JobManager, two TaskManagers) per
session, both started by the project's scripts (scripts/pgvector-server,
scripts/flink-cluster) on free loopback ports, and both stopped by their PIDs at the end of
the session, whatever happened."""

import shutil
import subprocess
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.pgvector.server import (
    ROOT,
    free_port,
    pgvector_server,
    run_script,
    scratch_dir,
)


@dataclass
class Cluster:
    folder: Path
    rest_port: int
    vector_store: dict
    start_seconds: float

    def run(self, *flink_run_args: str, timeout: float = 240) -> subprocess.CompletedProcess:
        """``flink run`` against this cluster; returns the finished client process."""
        return subprocess.run(
            [str(ROOT / "scripts" / "flink-cluster"), "run", "--dir", str(self.folder),
             *flink_run_args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def cluster():
    import time

    with ExitStack() as stack:
        vector_store, _, _ = stack.enter_context(pgvector_server())
        folder = scratch_dir("test-flink-cluster-")
        stack.callback(shutil.rmtree, folder, True)
        stack.callback(run_script, "flink-cluster", "stop", "--dir", str(folder), check=False)
        rest_port = free_port()
        started = time.monotonic()
        run_script("flink-cluster", "start", "--dir", str(folder), "--taskmanagers", "2",
                   "--rest-port", str(rest_port), "--rpc-port", str(free_port()), timeout=300)
        yield Cluster(folder, rest_port, vector_store, time.monotonic() - started)


@pytest.fixture
def scratch():
    folder = scratch_dir("test-e2e-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
