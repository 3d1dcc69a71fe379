"""Servers that every test of a session shares, under tests/ and e2e/ alike (``make test``
starts one pgvector server, not one per folder). A plugin, not a conftest, so that its
fixtures are visible everywhere: tests/conftest.py and e2e/conftest.py both register it
(``register``), whichever pytest loads first."""

import sys

import pytest

PLUGIN = "tests.session_servers"


def register(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(PLUGIN):  # the conftest loaded second finds it
        config.pluginmanager.register(sys.modules[__name__], PLUGIN)


@pytest.fixture(scope="session")
def pgvector_session():
    """One pgvector server per session (scripts/pgvector-server), started on first use:
    ``(vector_store, folder, seconds_to_start)``."""
    from tests.pgvector.server import pgvector_server

    with pgvector_server() as server:
        yield server
