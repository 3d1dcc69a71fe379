"""A table of its own on the session's pgvector server (``pgvector_session``, tests/conftest.py),
empty or filled with random rows, and the statements a store sends to it."""

import copy
import uuid

import pytest

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from tests.pgvector.random_rows import BIG_SHARE, FENCE, ROWS, fill_random_rows
from tests.pgvector.recording import record_statements


@pytest.fixture
def pgvector_store(pgvector_session):
    """The server's VECTOR_STORE value with a table of this test's own."""
    store = copy.deepcopy(pgvector_session[0])
    store["config"]["collection_name"] = f"t_{uuid.uuid4().hex[:12]}"
    return store


@pytest.fixture
def filled_store(pgvector_store):
    """``(memory, store)``: Mem0 on a table of ROWS random rows (``fill_random_rows``)."""
    memory, release = acquire_memory(StoreSpec("job", vector_store=pgvector_store,
                                               embedder="hashing"))
    fill_random_rows(pgvector_store, ROWS, int(ROWS * BIG_SHARE), 100)
    yield memory, pgvector_store
    release()


@pytest.fixture
def sent(filled_store):
    """The statements ``filled_store``'s Mem0 sends from now on (``record_statements``)."""
    return record_statements(filled_store[0])


@pytest.fixture
def fenced(filled_store):
    """``fenced(**settings)``: ``(memory, store, sent)``, a memory on ``filled_store``'s table
    whose searches of key "big" go to HNSW (``exact_search_up_to`` = FENCE, ``settings``
    added to its config), and the statements it sends; each is released after the test."""
    _, store = filled_store

    def build(**settings):
        config = {**store["config"], "exact_search_up_to": FENCE, **settings}
        memory, release = acquire_memory(StoreSpec("job", vector_store={**store,
                                                                         "config": config},
                                                   embedder="hashing"))
        opened.append(release)
        return memory, store, record_statements(memory)

    opened = []
    yield build
    for release in opened:
        release()
