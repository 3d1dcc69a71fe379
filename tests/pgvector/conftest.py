"""A table of its own on the session's pgvector server (``pgvector_session``, tests/conftest.py)."""

import copy
import uuid

import pytest


@pytest.fixture
def pgvector_store(pgvector_session):
    """The server's VECTOR_STORE value with a table of this test's own."""
    store = copy.deepcopy(pgvector_session[0])
    store["config"]["collection_name"] = f"t_{uuid.uuid4().hex[:12]}"
    return store
