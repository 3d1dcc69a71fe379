"""What a user's tests import: :class:`AgentHarness` (run an agent's actions without a
Flink cluster; the runtime's harness) with its :class:`ManualClock` and :class:`Snapshot`
(a checkpoint to restore from) and, in :mod:`flink_agents_ltm.testing.conformance`,
the long-term-memory contract as tests a custom memory runs.

``testing`` sits above the layers: it may import ``api`` and ``runtime`` (never the
integrations), and nothing of the package imports it."""

from flink_agents_ltm.runtime.harness import AgentHarness, ManualClock, Snapshot

__all__ = ["AgentHarness", "ManualClock", "Snapshot"]
