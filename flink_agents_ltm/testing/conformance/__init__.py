"""The long-term-memory contract as a conformance kit: the tests every implementation of
:class:`~flink_agents_ltm.api.memory.long_term_memory.BaseLongTermMemory` passes (the
project's in-memory memory, Mem0 on the embedded store, on Qdrant, on pgvector, and on a
vector store of ours run them). The whole contract, one module per part:

- :mod:`.core`: scoping, refusals, replay-stable ids, one validation of every input,
  filters, erasure (and what an author provides: :class:`MemoryUnderTest`);
- :mod:`.update`: ``update`` rewrites one item of its set in place, re-embedded, with add's
  checks, replay-stable and observed (the core call ``_update``);
- :mod:`.expiry`: items with a ``ttl`` are invisible from their expiry, kept alive by reads
  when asked, and deleted for real by a sweep of their own job (``_refresh_expiry``,
  ``_sweep_expired``);
- :mod:`.audit`: with an audit log attached, every write and erasure leaves one record of
  ids and times, and nothing remembered reaches it.

The author of a custom memory runs them from their own pytest, in a test module of theirs::

    import pytest

    from flink_agents_ltm.testing.conformance import *  # noqa: F403 - the contract's tests

    @pytest.fixture
    def memory_factory(tmp_path):
        # (job_id, limits) -> a fresh, empty memory; limits is None or a MemoryLimits
        return lambda job_id, limits: MyMemory(job_id, limits=limits or MemoryLimits())

The factory may also return a :class:`MemoryUnderTest`, to let the tests read the store
around the memory (``stored_values``), reopen a second memory on the same store (``reopen``,
as a restarted job does), open a memory of another job on the same store (``open_job``;
without it the tests that jobs stay apart are skipped), or clean up (``close``). Every
memory the factory made is closed after its test. Run ``pytest`` on that module: every
``test_*`` of this kit runs there.
"""

import pytest

# The kit's modules are tests: pytest rewrites their asserts (to show the values compared)
# when it imports them after this line.
pytest.register_assert_rewrite(*(f"{__name__}.{part}"
                                 for part in ("core", "update", "expiry", "audit")))

from flink_agents_ltm.testing.conformance import audit, core, expiry, update  # noqa: E402
from flink_agents_ltm.testing.conformance.audit import *  # noqa: E402, F403
from flink_agents_ltm.testing.conformance.core import *  # noqa: E402, F403
from flink_agents_ltm.testing.conformance.expiry import *  # noqa: E402, F403
from flink_agents_ltm.testing.conformance.update import *  # noqa: E402, F403

# What ``from flink_agents_ltm.testing.conformance import *`` brings into a test module: the
# fixtures the tests use and every test of every part.
__all__ = [*core.__all__, *update.__all__, *expiry.__all__, *audit.__all__]
