"""One pgvector server per session, started by scripts/pgvector-server."""

import copy
import uuid

import pytest

from tests.pgvector.server import pgvector_server


@pytest.fixture(scope="session")
def pgvector_session():
    with pgvector_server() as server:
        yield server


@pytest.fixture
def pgvector_store(pgvector_session):
    """The server's VECTOR_STORE value with a table of this test's own."""
    store = copy.deepcopy(pgvector_session[0])
    store["config"]["collection_name"] = f"t_{uuid.uuid4().hex[:12]}"
    return store
