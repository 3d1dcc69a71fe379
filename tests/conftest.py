"""Shared test setup: an isolated home for Mem0, set before anything imports it,
removed when the session ends; the session's servers (tests/session_servers.py)."""

import atexit
import os
import shutil
import tempfile

import pytest

from flink_agents_ltm.integrations.mem0.environment import prepare_environment

_home = tempfile.mkdtemp(prefix="flink-agents-ltm-tests-")
os.environ.setdefault("FLINK_AGENTS_LTM_HOME", _home)
os.environ.setdefault("MEM0_DIR", os.path.join(_home, "mem0"))
atexit.register(shutil.rmtree, _home, ignore_errors=True)
# The rest of Mem0's environment as the package sets it (telemetry off, Hugging Face
# offline), now: a test module that imports mem0 itself, before the package, would
# otherwise start Mem0's PostHog client, which retries the network at exit.
prepare_environment()


def pytest_configure(config):
    from tests.session_servers import register

    register(config)  # pgvector_session: one server for tests/ and e2e/


@pytest.fixture
def user_dirs(tmp_path):
    """``(cwd, scratch, home)`` of a job run as a user runs it (``tests/job_runner.py``): the
    user's folder, Flink's temp files and logs (removed afterwards), the long-term memory's
    home."""
    cwd, scratch, home = tmp_path / "work", tmp_path / "flink", tmp_path / "home"
    cwd.mkdir()
    yield cwd, scratch, home
    shutil.rmtree(scratch, ignore_errors=True)
