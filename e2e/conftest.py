"""One standalone Flink cluster (a JobManager, two TaskManagers) per session, started by
scripts/flink-cluster on free loopback ports and stopped by its PIDs at the end of the
session, whatever happened; its jobs keep long-term memory on the session's pgvector server
(``pgvector_session``, tests/session_servers.py: the same server as the tests under tests/).

Every test that uses the cluster gets its jobs cancelled when it ends, pass or fail
(``Cluster.cancelling_new_jobs``), and each submission first checks that the cluster has
the slots the job needs (``Cluster.require_free_slots``): a job a failed test left behind
is named instead of failing the next tests with a resource timeout.

``LTM_E2E_CLUSTER_DIR=<folder>``: use the cluster already running there (started with
``scripts/flink-cluster start --dir <folder>``) and leave it running; such a session has no
pgvector server (``cluster.vector_store`` is ``None``)."""

import os
import shutil
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from e2e.cluster import Cluster, attach
from tests.pgvector.server import free_port, run_script, scratch_dir
from tests.session_servers import register

ATTACH = "LTM_E2E_CLUSTER_DIR"


def pytest_configure(config):
    register(config)  # pgvector_session


@pytest.fixture(scope="session")
def cluster(request, tmp_path_factory):
    transcripts = tmp_path_factory.mktemp("client-output")
    if os.environ.get(ATTACH):
        yield attach(Path(os.environ[ATTACH]), transcripts)
        return
    vector_store, _, _ = request.getfixturevalue("pgvector_session")
    with ExitStack() as stack:
        folder = scratch_dir("test-flink-cluster-")
        stack.callback(shutil.rmtree, folder, True)
        stack.callback(run_script, "flink-cluster", "stop", "--dir", str(folder), check=False)
        rest_port = free_port()
        started = time.monotonic()
        # The Python running the tests runs the cluster (its Flink, e.g. a .venv-flink-1.20.5).
        run_script("flink-cluster", "start", "--dir", str(folder), "--taskmanagers", "2",
                   "--python", sys.executable,
                   "--rest-port", str(rest_port), "--rpc-port", str(free_port()), timeout=300)
        yield Cluster(folder, rest_port, vector_store, time.monotonic() - started, transcripts)


@pytest.fixture(autouse=True)
def _jobs_cancelled_at_the_end(request):
    """A test on the cluster: the jobs it submitted are cancelled when it ends."""
    if "cluster" not in request.fixturenames:
        yield
        return
    with request.getfixturevalue("cluster").cancelling_new_jobs():
        yield


@pytest.fixture
def scratch():
    folder = scratch_dir("test-e2e-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
