"""Servers that every test of a session shares, under tests/ and e2e/ alike (``make test``
starts one pgvector server, not one per folder). A plugin, not a conftest, so that its
fixtures are visible everywhere: tests/conftest.py and e2e/conftest.py both register it
(``register``), whichever pytest loads first."""

import signal
import sys
import threading

import pytest

PLUGIN = "tests.session_servers"


def register(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(PLUGIN):  # the conftest loaded second finds it
        config.pluginmanager.register(sys.modules[__name__], PLUGIN)
        _stop_on_sigterm()


def _stop_on_sigterm() -> None:
    """SIGTERM (a CI runner's or ``.ci/run``'s stop, ``kill``) ends the session the way
    Ctrl-C does: pytest tears its fixtures down, so the session's Flink cluster and pgvector
    server are stopped and no job is left running. By default SIGTERM ends Python at once,
    leaving them behind."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL):
        signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it at once
    raise KeyboardInterrupt(f"stopped by signal {signum}")


@pytest.fixture(scope="session")
def pgvector_session():
    """One pgvector server per session (scripts/pgvector-server), started on first use:
    ``(vector_store, folder, seconds_to_start)``."""
    from tests.pgvector.server import pgvector_server

    with pgvector_server() as server:
        yield server
