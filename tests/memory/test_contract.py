"""The project's own memories pass the published conformance kit
(:mod:`flink_agents_ltm.testing.conformance`), run here exactly as a memory author runs it:
its tests imported, and a ``memory_factory`` fixture. Each test runs on every
implementation (``tests/memory/contracts.py`` builds them: in-memory, Mem0 on the embedded
store, on Qdrant, on the session's pgvector server, on a vector store of ours), reading
each store around the memory."""

from contextlib import ExitStack

import pytest

from flink_agents_ltm.testing.conformance import *  # noqa: F403 - the contract's tests
from flink_agents_ltm.testing.conformance import MemoryUnderTest
from tests.memory.contracts import NAMES, implementation


@pytest.fixture(params=NAMES)
def memory_factory(request):
    pgvector = (request.getfixturevalue("pgvector_session")[0]
                if request.param == "mem0-pgvector" else None)
    with ExitStack() as stack:

        def factory(job_id, limits):
            built = stack.enter_context(implementation(request.param, job=job_id,
                                                       limits=limits, pgvector=pgvector))
            return MemoryUnderTest(built.ltm, stored_values=built.raw_values,
                                   reopen=built.reopen, open_job=built.open_job,
                                   close=lambda: None)

        yield factory
